import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Files } from './agent-process.js'

/** A fresh temporary folder; `remove()` deletes it. */
export function temporaryFolder(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), `agentx-${prefix}-`))
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) }
}

/** The files an agent process works with, inside `folder`. */
export function filesIn(folder: string): Files {
  return {
    db: join(folder, 'agent.db'),
    deployLog: join(folder, 'deployments.log'),
    runsLog: join(folder, 'runs.log'),
  }
}

/** The JSON lines of a file; `[]` when it does not exist. */
export function jsonLines(file: string): Array<Record<string, unknown>> {
  if (!existsSync(file)) return []
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}
