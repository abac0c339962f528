// Fails CI when a test was skipped, unless it is a contract rule the kit skipped because the
// implementation does not declare the capability it needs (recorded in the conformance reports).
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const [logFile, reportDir] = process.argv.slice(2)
const log = readFileSync(logFile, 'utf8').replace(/\x1b\[[0-9;]*m/g, '')

let skipped = 0
let passed = 0
for (const match of log.matchAll(/^.*\bTests\s+(.*)\((\d+)\)\s*$/gm)) {
  const summary = match[1]
  skipped += Number(/(\d+) skipped/.exec(summary)?.[1] ?? 0) + Number(/(\d+) todo/.exec(summary)?.[1] ?? 0)
  passed += Number(/(\d+) passed/.exec(summary)?.[1] ?? 0)
}
for (const match of log.matchAll(/^.*# (skip|todo) (\d+)\s*$/gm)) skipped += Number(match[2])
for (const match of log.matchAll(/^.*# pass (\d+)\s*$/gm)) passed += Number(match[1])

let declaredSkips = 0
if (reportDir && existsSync(reportDir)) {
  for (const file of readdirSync(reportDir).filter((name) => name.endsWith('.json'))) {
    const report = JSON.parse(readFileSync(join(reportDir, file), 'utf8'))
    declaredSkips += (report.results ?? []).filter((r) => r.status === 'skipped').length
  }
}

console.log(`ci: ${passed} tests passed, ${skipped} skipped (${declaredSkips} contract rules skipped for undeclared capabilities)`)
if (passed === 0) {
  console.error('ci: no test ran')
  process.exit(1)
}
if (skipped > declaredSkips) {
  console.error(`ci: ${skipped - declaredSkips} test(s) were skipped without a declared capability reason`)
  process.exit(1)
}
