// Fails CI when a test was skipped, unless it is a contract rule the kit skipped because the
// implementation does not declare the capability it needs (recorded in the conformance reports).
//
// Usage: node .ci/check-skips.mjs <log of `pnpm test`> [<conformance report folder>]
//
// The log holds the output of two runners, possibly interleaved line by line by turbo (each line
// prefixed with `<package>:<task>: `):
// - vitest's summary line: `Tests  12 passed | 1 skipped | 1 todo (14)`;
// - node:test's summary block, in the format of whichever reporter printed it: `tap` (`# pass 4`,
//   `# skipped 1`; Node 22's default when stdout is not a terminal), `spec` (`ℹ pass 4`; the
//   default from Node 23 on) or `junit` (`<!-- pass 4 -->`). The dot and lcov reporters print
//   neither counts nor skip markers, so their runs are invisible here; no package uses them.
// Per-test skip markers (`ok 3 - name # SKIP reason` in TAP, `﹣ name (1ms)` in spec, `# TODO`
// in both) are counted as well, and the larger of the two counts wins, so a summary the check
// cannot read does not hide a skip. A todo test counts as skipped.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The fields of a node:test summary block, in the order Node prints them. */
const NODE_TEST_FIELDS = ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo', 'duration_ms']
/** The fields a summary block must have been seen with to be counted. */
const REQUIRED_FIELDS = ['tests', 'pass', 'fail', 'cancelled', 'skipped', 'todo']

/** turbo's line prefix (`@agentx/core:test: `), when present, and the rest of the line. */
const PREFIXED_LINE = /^((?:[^\s:]+:)+[^\s:]+: )?(.*)$/
/** A node:test summary line: `# pass 4` (tap), `ℹ pass 4` (spec), `<!-- pass 4 -->` (junit). */
const NODE_TEST_SUMMARY_LINE = /^\s*(#|ℹ|<!--) ([a-z_]+) (\d+(?:\.\d+)?)(?: -->)?\s*$/
/** vitest's summary line (`Tests  3 passed | 1 skipped (4)`; `Test Files` is another line). */
const VITEST_SUMMARY_LINE = /^\s*Tests\s+(.*)\((\d+)\)\s*$/
/** A skipped or todo test in TAP: `ok 3 - name # SKIP reason`, `not ok 4 - name # TODO`. */
const TAP_SKIP_MARKER = /^\s*(?:not )?ok \d+(?: -)? .*# (?:SKIP|TODO)\b/i
/** A skipped test in the spec reporter: `﹣ name (0.2ms) # reason`. */
const SPEC_SKIP_MARKER = /^\s*﹣ /
/** A todo test in the spec reporter: `✔ name (0.1ms) # TODO`. */
const SPEC_TODO_MARKER = /^\s*[✔✖] .*# TODO\b/

/** @type {Record<string, NodeTestSummary['format']>} */
const FORMAT_OF_MARKER = { '#': 'tap', ℹ: 'spec', '<!--': 'junit' }
/** ANSI escape sequences (colours, cursor movement). */
const ANSI_ESCAPE = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, 'g')

/**
 * @typedef {object} NodeTestSummary
 * @property {string} source turbo's prefix of the lines (`@agentx/ci:test:`), or '' without one.
 * @property {'tap' | 'spec' | 'junit'} format the reporter that printed the block.
 * @property {Partial<Record<string, number>>} counts the block's fields (`pass`, `skipped`, …).
 */

/**
 * @typedef {object} TestResults
 * @property {number} passed tests that passed, over both runners.
 * @property {number} skipped tests skipped or marked todo, over both runners.
 * @property {number} failed tests that failed or were cancelled, over both runners.
 * @property {{ summaries: number, passed: number, skipped: number, failed: number }} vitest
 * @property {{ summaries: NodeTestSummary[], passed: number, skipped: number, failed: number, skipMarkers: number }} nodeTest
 * @property {string[]} problems summary blocks that could not be read completely.
 */

/**
 * Reads the test counts out of a `pnpm test` log.
 * @param {string} log the log, with or without ANSI colours.
 * @returns {TestResults}
 */
export function readTestResults(log) {
  const lines = log.replace(ANSI_ESCAPE, '').split(/\r?\n/)
  const vitest = { summaries: 0, passed: 0, skipped: 0, failed: 0 }
  /** @type {NodeTestSummary[]} */
  const summaries = []
  /** @type {Map<string, NodeTestSummary>} The block being read, per source and format (turbo interleaves the output of packages). */
  const open = new Map()
  /** @type {string[]} */
  const problems = []
  let skipMarkers = 0

  for (const line of lines) {
    const [, prefix = '', text = ''] = PREFIXED_LINE.exec(line) ?? []
    const source = prefix.trim()

    const vitestSummary = VITEST_SUMMARY_LINE.exec(text)
    if (vitestSummary) {
      const parts = vitestSummary[1] ?? ''
      /** @param {string} word */
      const count = (word) => Number(new RegExp(`(\\d+) ${word}`).exec(parts)?.[1] ?? 0)
      vitest.summaries++
      vitest.passed += count('passed')
      vitest.skipped += count('skipped') + count('todo')
      vitest.failed += count('failed')
      continue
    }

    const summaryLine = NODE_TEST_SUMMARY_LINE.exec(text)
    const [, marker = '', field = '', value = ''] = summaryLine ?? []
    const format = FORMAT_OF_MARKER[marker]
    if (format !== undefined && NODE_TEST_FIELDS.includes(field)) {
      const key = `${source}\u0000${format}`
      let block = open.get(key)
      if (field === 'tests' || block === undefined || field in block.counts) {
        block = { source, format, counts: {} }
        open.set(key, block)
        summaries.push(block)
      }
      block.counts[field] = Number(value)
      continue
    }

    if (TAP_SKIP_MARKER.test(text) || SPEC_SKIP_MARKER.test(text) || SPEC_TODO_MARKER.test(text))
      skipMarkers++
  }

  const nodeTest = { summaries, passed: 0, skipped: 0, failed: 0, skipMarkers }
  for (const { source, format, counts } of summaries) {
    const missing = REQUIRED_FIELDS.filter((field) => counts[field] === undefined)
    if (missing.length > 0) {
      problems.push(
        `a node:test summary (${format}${source ? ` from ${source}` : ''}) lacks ${missing.join(', ')}`,
      )
    }
    nodeTest.passed += counts.pass ?? 0
    nodeTest.skipped += (counts.skipped ?? 0) + (counts.todo ?? 0)
    nodeTest.failed += (counts.fail ?? 0) + (counts.cancelled ?? 0)
  }
  nodeTest.skipped = Math.max(nodeTest.skipped, skipMarkers)

  return {
    passed: vitest.passed + nodeTest.passed,
    skipped: vitest.skipped + nodeTest.skipped,
    failed: vitest.failed + nodeTest.failed,
    vitest,
    nodeTest,
    problems,
  }
}

/**
 * Counts the contract rules the kit skipped because the implementation under test does not declare
 * the capability they need: the `skipped` results of every conformance report in the folder.
 * @param {string | undefined} reportDirectory
 * @returns {number}
 */
export function countDeclaredSkips(reportDirectory) {
  if (!reportDirectory || !existsSync(reportDirectory)) return 0
  let declared = 0
  for (const file of readdirSync(reportDirectory).filter((name) => name.endsWith('.json'))) {
    /** @type {{ results?: Array<{ status?: string }> }} */
    const report = JSON.parse(readFileSync(join(reportDirectory, file), 'utf8'))
    declared += (report.results ?? []).filter((result) => result.status === 'skipped').length
  }
  return declared
}

/**
 * The verdict on a log: the lines to print and whether CI passes.
 * @param {string} log
 * @param {string | undefined} reportDirectory
 * @returns {{ ok: boolean, messages: string[] }}
 */
export function checkSkips(log, reportDirectory) {
  const results = readTestResults(log)
  const declared = countDeclaredSkips(reportDirectory)
  const formats = results.nodeTest.summaries.map((summary) => summary.format)
  const messages = [
    `ci: ${results.passed} tests passed, ${results.skipped} skipped, ${results.failed} failed ` +
      `(vitest: ${results.vitest.summaries} runs; node:test: ${formats.length} runs` +
      `${formats.length > 0 ? `, reporters ${[...new Set(formats)].join(', ')}` : ''}); ` +
      `${declared} contract rules skipped for undeclared capabilities`,
  ]
  let ok = true
  for (const problem of results.problems) {
    messages.push(`ci: ${problem}`)
    ok = false
  }
  if (results.passed === 0) {
    messages.push('ci: no test ran')
    ok = false
  }
  if (results.failed > 0) {
    messages.push(`ci: ${results.failed} test(s) failed or were cancelled`)
    ok = false
  }
  if (results.skipped > declared) {
    messages.push(
      `ci: ${results.skipped - declared} test(s) were skipped without a declared capability reason`,
    )
    ok = false
  }
  return { ok, messages }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [logFile, reportDirectory] = process.argv.slice(2)
  if (!logFile) {
    console.error('usage: node .ci/check-skips.mjs <log> [<conformance report folder>]')
    process.exit(2)
  }
  const { ok, messages } = checkSkips(readFileSync(logFile, 'utf8'), reportDirectory)
  for (const message of messages) (ok ? console.log : console.error)(message)
  process.exit(ok ? 0 : 1)
}
