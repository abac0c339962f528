// The node:test file whose output under each Node major is recorded next to it (see
// ../record-node-test-output.mjs): two passing tests, two skipped, one todo, one suite.
import assert from 'node:assert/strict'
import { describe, it, test } from 'node:test'

describe('a suite', () => {
  it('passes', () => assert.equal(1 + 1, 2))
  it('is skipped with a reason', { skip: 'requires capability images' }, () => {})
  it('is todo', { todo: true }, () => {})
})
test('passes at the top level', () => assert.ok(true))
test('skips itself at run time', (t) => t.skip('not on this platform'))
