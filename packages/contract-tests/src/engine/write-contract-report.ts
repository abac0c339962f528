import { mkdirSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { ContractReport } from './contract-report.js'

/** The environment variable the bindings read: where to write the JSON conformance report. */
export const CONTRACT_REPORT_ENV = 'AGENTX_CONTRACT_REPORT'

/**
 * The environment variable CI sets: a directory that receives one report per contract. Used when
 * {@link CONTRACT_REPORT_ENV} is not set.
 */
export const CONTRACT_REPORT_DIR_ENV = 'AGENTX_CONTRACT_REPORT_DIR'

/** Where the bindings write the report, from the environment; `undefined` when nothing asks for one. */
export function contractReportTarget(env: Record<string, string | undefined>): string | undefined {
  const target = env[CONTRACT_REPORT_ENV]
  if (target) return target
  const directory = env[CONTRACT_REPORT_DIR_ENV]
  return directory ? `${directory.replace(/[\\/]+$/, '')}/` : undefined
}

/**
 * Writes `report` as JSON and returns the file written. `target` ending in `/` or naming an
 * existing directory gets one file per contract, `<dir>/<kind>-<name>.json` (so several
 * contracts in one run do not overwrite each other); any other path is written as is.
 */
export function writeContractReport(report: ContractReport, target: string): string {
  let file = target
  const isDirectory = target.endsWith('/') || target.endsWith('\\') || isExistingDirectory(target)
  if (isDirectory) file = join(target, `${report.kind}-${slug(report.name)}.json`)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
  return file
}

function isExistingDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

function slug(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'contract'
}
