import { spawnSync } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import BetterSqlite3 from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { REQUIRED_NODE_API_VERSION } from './check-node-api.js'

// The native addon is what ties this package to a Node version: CI runs this file under every
// supported major (see the root README), each from its own fresh install.
const folder = mkdtempSync(join(tmpdir(), 'agentx-sqlite-addon-'))
afterAll(() => rmSync(folder, { recursive: true, force: true }))

/** The folder of the better-sqlite3 package this package resolves. */
const betterSqlite3Folder = realpathSync(
  dirname(dirname(createRequire(import.meta.url).resolve('better-sqlite3'))),
)
const runtime = `Node ${process.version} (modules ${process.versions.modules}, Node-API ${process.versions.napi})`

describe('the better-sqlite3 addon', () => {
  it('loads from the installed better-sqlite3 package and runs statements on a file database', () => {
    // Its prebuilt binaries are Node-API 10 addons (Node 22.14 and later).
    expect(Number(process.versions.napi), runtime).toBeGreaterThanOrEqual(REQUIRED_NODE_API_VERSION)
    const database = new BetterSqlite3(join(folder, 'addon.db'))
    try {
      expect(database.pragma('journal_mode = WAL', { simple: true })).toBe('wal')
      database.exec('create table notes (id integer primary key, body text not null, size integer)')
      const insert = database.prepare('insert into notes (body, size) values (?, ?)')
      const insertAll = database.transaction((bodies: string[]) => {
        for (const body of bodies) insert.run(body, body.length)
      })
      insertAll(Array.from({ length: 500 }, (_, index) => `note ${index}`))

      expect(database.prepare('select count(*) as count, sum(size) as size from notes').get()).toEqual({
        count: 500,
        size: 500 * 'note '.length + [...Array(500).keys()].join('').length,
      })
      expect(database.prepare('select body from notes where id = ?').pluck().get(42)).toBe('note 41')
      const version = database.prepare('select sqlite_version()').pluck().get()
      expect(version, runtime).toMatch(/^3\.\d+\.\d+$/)
    } finally {
      database.close()
    }

    // The shared object the process loaded is the addon of that package (a prebuilt Node-API
    // binary for this platform, or one compiled on purpose under build/), not a stray copy.
    const report = process.report.getReport() as { sharedObjects: string[] }
    const addons = report.sharedObjects.filter((file) => file.endsWith('.node'))
    const addon = addons.find((file) => realpathSync(file).startsWith(`${betterSqlite3Folder}${sep}`))
    expect(addon, `${runtime} loaded ${addons.join(', ') || 'no addon'}`).toMatch(
      /([/\\]prebuilds[/\\][a-z0-9-]+|[/\\]build[/\\]Release[/\\]better_sqlite3)\.node$/,
    )
  })

  it('finalizes prepared statements without aborting when the worker threads that made them exit', () => {
    // better-sqlite3 12 aborted the process here on Node 24, in 10 of 10 runs of this script.
    const script = fileURLToPath(new URL('__fixtures__/finalize-statements-in-workers.cjs', import.meta.url))
    const run = spawnSync(process.execPath, [script, betterSqlite3Folder, '10'], {
      encoding: 'utf8',
      timeout: 60_000,
    })
    const output = `${runtime}: exit ${run.status}, signal ${run.signal}\n${run.stdout}${run.stderr}`
    expect(run.signal, output).toBeNull()
    expect(run.status, output).toBe(0)
    expect(run.stderr, output).not.toMatch(/Assertion failed|FATAL ERROR/)
    expect(run.stdout.trim(), output).toBe('finalized 102010 statements in 10 workers')
  }, 90_000)
})
