import { spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { matchesGlob } from 'node:path'
import { InMemoryPersister } from '@agentx/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { configDefaults } from 'vitest/config'
import { adapterRules } from '../src/rules/adapter/index.js'

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..')
// Inside the package, so the compiled code resolves @agentx/core like an installed copy would.
const workDirectory = join(packageRoot, 'node_modules', '.cache', `node-test-binding-${process.pid}`)
const compiled = join(workDirectory, 'dist')
const reports = join(workDirectory, 'reports')

/** The suite a user would write with the node:test binding (against the compiled package). */
const SUITE = `
import { describeAdapterContract } from './dist/bindings/node-test.js'
import { anthropicMessagesDialect } from './dist/index.js'
import { ReferenceAnthropicAdapter } from './dist/reference/reference-anthropic-adapter.js'

describeAdapterContract({
  name: 'ReferenceAnthropicAdapter (node:test)',
  dialect: anthropicMessagesDialect,
  createAdapter: (context) => new ReferenceAnthropicAdapter(context),
  capabilities: ['toolCalls', 'parallelToolCalls', 'thinking', 'usage', 'structuredOutput'],
})
`

/** A vitest suite that would fail if node --test ran it. */
const VITEST_SUITE = `
import { describePersisterContract } from './dist/bindings/vitest.js'
describePersisterContract({ name: 'picked up by the wrong runner', create: () => { throw new Error('wrong runner') } })
`

let tap = ''
let exitCode: number | null = null

beforeAll(() => {
  mkdirSync(workDirectory, { recursive: true })
  const tsc = spawnSync(
    join(packageRoot, 'node_modules', '.bin', 'tsc'),
    ['-p', 'tsconfig.build.json', '--outDir', compiled],
    {
      cwd: packageRoot,
      encoding: 'utf8',
    },
  )
  if (tsc.status !== 0) throw new Error(`compiling the package failed:\n${tsc.stdout}${tsc.stderr}`)
  writeFileSync(join(workDirectory, 'adapter.contract.node.mjs'), SUITE)
  // A vitest suite in the same folder: the documented pattern must leave it alone.
  writeFileSync(join(workDirectory, 'persister.contract.test.mjs'), VITEST_SUITE)
  const run = spawnSync(process.execPath, ['--test', '--test-reporter=tap', '**/*.contract.node.mjs'], {
    cwd: workDirectory,
    encoding: 'utf8',
    // As a user's shell would run it: not inside vitest.
    env: {
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST'))),
      AGENTX_CONTRACT_REPORT: '',
      AGENTX_CONTRACT_REPORT_DIR: reports,
    },
    timeout: 90_000,
  })
  tap = run.stdout
  exitCode = run.status
}, 120_000)

afterAll(() => {
  rmSync(workDirectory, { recursive: true, force: true })
})

describe('the two bindings in one folder', () => {
  it("vitest's default pattern takes the vitest suite and leaves the node:test suite alone", () => {
    const matches = (file: string) => configDefaults.include.some((pattern) => matchesGlob(file, pattern))
    expect(matches('persister.contract.test.ts')).toBe(true)
    expect(matches('persister.contract.test.mjs')).toBe(true)
    expect(matches('adapter.contract.node.mjs')).toBe(false)
  })

  it('node --test with the documented pattern runs only the node:test suite', () => {
    expect(tap).not.toMatch(/wrong runner|runs under `node --test`/)
    expect(tap).toMatch(/adapter contract: ReferenceAnthropicAdapter \(node:test\)/)
  })

  it('each binding refuses to run under the other runner, saying what to do', async () => {
    const nodeTest = await import('../src/bindings/node-test.js')
    expect(() =>
      nodeTest.describePersisterContract({ name: 'x', create: () => new InMemoryPersister() }),
    ).toThrow(/runs under vitest.*\*\.contract\.node\.mjs/)
  })
})

describe('describeAdapterContract under node --test', () => {
  it('registers one passing test per rule, named with id, level and title', () => {
    expect(exitCode, tap).toBe(0)
    for (const rule of adapterRules) {
      if (rule.requires?.some((capability) => capability === 'images' || capability === 'providerSessionId'))
        continue
      expect(tap).toMatch(new RegExp(`^\\s*ok \\d+ - ${rule.id} \\[${rule.level}\\] `, 'm'))
    }
    expect(tap).not.toMatch(/^\s*not ok/m)
  })

  it('reports rules whose capability is undeclared as skipped, with the reason', () => {
    const skipped = adapterRules.filter((rule) =>
      rule.requires?.some((capability) => capability === 'images' || capability === 'providerSessionId'),
    )
    expect(skipped.length).toBeGreaterThan(0)
    for (const rule of skipped) {
      expect(tap).toMatch(
        new RegExp(`^\\s*ok \\d+ - ${rule.id} \\[${rule.level}\\] .*# SKIP requires capability`, 'm'),
      )
    }
    expect(tap).toMatch(new RegExp(`^# skip(?:ped)? ${skipped.length}$`, 'm'))
    expect(tap).toMatch(new RegExp(`^# pass ${adapterRules.length - skipped.length}$`, 'm'))
  })

  it('writes the conformance report to AGENTX_CONTRACT_REPORT_DIR, skips included', () => {
    const files = readdirSync(reports)
    expect(files).toEqual(['adapter-ReferenceAnthropicAdapter-node-test.json'])
    const report = JSON.parse(readFileSync(join(reports, files[0] as string), 'utf8'))
    expect(report.kind).toBe('adapter')
    expect(report.summary).toMatchObject({ total: adapterRules.length, failed: 0, compliant: true })
    const skippedIds = report.results
      .filter((result: { status: string }) => result.status === 'skipped')
      .map((result: { id: string }) => result.id)
    expect(skippedIds).toEqual(
      adapterRules
        .filter((rule) => rule.requires?.some((c) => c === 'images' || c === 'providerSessionId'))
        .map((rule) => rule.id),
    )
  })
})
