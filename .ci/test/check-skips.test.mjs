import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { readTestResults } from '../check-skips.mjs'

const fixtures = fileURLToPath(new URL('__fixtures__/', import.meta.url))
const checkSkipsScript = fileURLToPath(new URL('../check-skips.mjs', import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), 'agentx-check-skips-'))
after(() => rmSync(scratch, { recursive: true, force: true }))

/**
 * The recorded output of __fixtures__/node-test-sample.mjs (2 passing, 2 skipped, 1 todo), per
 * Node version and reporter (see record-node-test-output.mjs).
 */
const recordings = readdirSync(fixtures)
  .map((file) => /^node-(\d+)\.(\d+\.\d+)\.(default|tap|spec|junit)\.txt$/.exec(file))
  .filter((match) => match !== null)
  .map(([file, major, , reporter]) => ({
    file,
    major: Number(major),
    reporter,
    text: readFileSync(join(fixtures, file), 'utf8'),
  }))

/**
 * The recording of one Node major and reporter.
 * @param {number} major
 * @param {string} reporter
 */
function recording(major, reporter) {
  const found = recordings.find((entry) => entry.major === major && entry.reporter === reporter)
  assert.ok(found, `no recording of Node ${major} with the ${reporter} reporter in ${fixtures}`)
  return found.text
}

/**
 * Prefixes every line the way turbo does in its stream output.
 * @param {string} source
 * @param {string} text
 */
function prefixed(source, text) {
  return text
    .split('\n')
    .map((line) => `${source}: ${line}`)
    .join('\n')
}

/**
 * Runs the check's command line on a log and a report folder.
 * @param {string} log
 * @param {string} [reports]
 */
function runCheck(log, reports) {
  const logFile = join(scratch, `log-${Math.random().toString(36).slice(2)}.txt`)
  writeFileSync(logFile, log)
  const run = spawnSync(process.execPath, [checkSkipsScript, logFile, ...(reports ? [reports] : [])], {
    encoding: 'utf8',
  })
  return { status: run.status, output: `${run.stdout}${run.stderr}` }
}

/**
 * A folder of conformance reports, one per entry, with that many skipped rules.
 * @param {string} name
 * @param {number[]} skippedPerReport
 */
function reportFolder(name, ...skippedPerReport) {
  const folder = join(scratch, name)
  mkdirSync(folder, { recursive: true })
  skippedPerReport.forEach((skipped, index) => {
    const results = [
      { id: 'P-001', status: 'passed' },
      ...Array.from({ length: skipped }, (_, rule) => ({ id: `P-1${rule}`, status: 'skipped' })),
    ]
    writeFileSync(join(folder, `report-${index}.json`), JSON.stringify({ results }))
  })
  return folder
}

describe('node:test output recorded under each supported Node major', () => {
  it('holds a recording of each reporter from Node 22, 24 and 26', () => {
    for (const major of [22, 24, 26]) {
      for (const reporter of ['default', 'tap', 'spec', 'junit']) recording(major, reporter)
    }
  })

  it('shows the formats the check must read: TAP by default on Node 22, spec from Node 24 on', () => {
    assert.match(recording(22, 'default'), /^# skipped 2$/m)
    assert.doesNotMatch(recording(22, 'default'), /^# skip \d+$/m)
    for (const major of [24, 26]) assert.match(recording(major, 'default'), /^ℹ skipped 2$/m)
  })

  for (const { file, reporter, text } of recordings) {
    it(`counts 2 passed and 3 skipped (2 skipped, 1 todo) in ${file}`, () => {
      const results = readTestResults(text)
      assert.equal(results.passed, 2)
      assert.equal(results.skipped, 3)
      assert.equal(results.failed, 0)
      assert.deepEqual(results.problems, [])
      assert.equal(results.nodeTest.summaries.length, 1)
      const format = reporter === 'default' ? (file.startsWith('node-22.') ? 'tap' : 'spec') : reporter
      assert.equal(results.nodeTest.summaries[0]?.format, format)
    })
  }
})

describe('readTestResults on a pnpm test log', () => {
  it('sums node:test runs whose lines turbo interleaved, and vitest summaries', () => {
    const tap = prefixed('@agentx/ci:test', recording(22, 'default')).split('\n')
    const spec = prefixed('@agentx/example:test', recording(26, 'default')).split('\n')
    const interleaved = []
    for (let index = 0; index < Math.max(tap.length, spec.length); index++) {
      if (index < tap.length) interleaved.push(tap[index])
      if (index < spec.length) interleaved.push(spec[index])
    }
    interleaved.push(
      '@agentx/core:test: \x1b[2m      Tests \x1b[22m \x1b[1m\x1b[32m120 passed\x1b[39m\x1b[22m\x1b[90m (120)\x1b[39m',
      '@agentx/persister-sqlite:test:       Tests  40 passed | 1 skipped | 2 todo (43)',
    )
    const results = readTestResults(interleaved.join('\n'))
    assert.deepEqual(results.problems, [])
    assert.equal(results.nodeTest.summaries.length, 2)
    assert.deepEqual(results.nodeTest.summaries.map(({ source, format }) => `${source} ${format}`).sort(), [
      '@agentx/ci:test: tap',
      '@agentx/example:test: spec',
    ])
    assert.equal(results.vitest.summaries, 2)
    assert.equal(results.passed, 2 + 2 + 120 + 40)
    assert.equal(results.skipped, 3 + 3 + 3)
  })

  it('counts skips from the per-test markers when no summary can be read', () => {
    /** @param {string} text */
    const withoutSummary = (text) => text.replace(/^(# |ℹ )(tests|pass|skipped|todo) .*$/gm, '')
    assert.equal(readTestResults(withoutSummary(recording(22, 'default'))).skipped, 3)
    assert.equal(readTestResults(withoutSummary(recording(24, 'default'))).skipped, 3)
  })

  it('reports a summary block it cannot read completely', () => {
    const truncated = recording(24, 'default').replace(/^ℹ cancelled 0\n/m, '')
    assert.deepEqual(readTestResults(truncated).problems, ['a node:test summary (spec) lacks cancelled'])
  })

  it('counts failed and cancelled node:test tests and failed vitest tests', () => {
    const failing = recording(26, 'default')
      .replace('ℹ fail 0', 'ℹ fail 1')
      .replace('ℹ cancelled 0', 'ℹ cancelled 2')
    assert.equal(readTestResults(failing).failed, 3)
    assert.equal(readTestResults('      Tests  1 failed | 9 passed (10)').failed, 1)
  })
})

describe('check-skips.mjs', () => {
  it('fails a log with skips that no conformance report declares', () => {
    for (const major of [22, 24, 26]) {
      const { status, output } = runCheck(recording(major, 'default'), reportFolder(`none-${major}`))
      assert.equal(status, 1, output)
      assert.match(output, /3 test\(s\) were skipped without a declared capability reason/)
    }
  })

  it('passes a log whose skips are contract rules skipped for undeclared capabilities', () => {
    for (const major of [22, 24, 26]) {
      const { status, output } = runCheck(
        recording(major, 'default'),
        reportFolder(`declared-${major}`, 1, 2),
      )
      assert.equal(status, 0, output)
      assert.match(output, /2 tests passed, 3 skipped, 0 failed .*3 contract rules skipped/)
    }
  })

  it('fails a log in which no test ran, and one with a failed test', () => {
    assert.equal(runCheck('turbo: no tasks were executed\n').status, 1)
    const failing = recording(22, 'default').replace('# fail 0', '# fail 1')
    const { status, output } = runCheck(failing, reportFolder('declared-failing', 3))
    assert.equal(status, 1, output)
    assert.match(output, /1 test\(s\) failed or were cancelled/)
  })
})
