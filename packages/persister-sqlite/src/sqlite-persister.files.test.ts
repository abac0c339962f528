import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AnyMessage, SessionData } from '@agentx/core'
import { isAgentError } from '@agentx/core'
import BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { createSqlitePersister, SQLITE_SCHEMA_VERSION, type SqlitePersister } from './index.js'

const folder = mkdtempSync(join(tmpdir(), 'agentx-sqlite-files-'))
afterAll(() => {
  chmodSync(folder, 0o755)
  rmSync(folder, { recursive: true, force: true })
})

let fileCount = 0
const open: Array<{ close(): unknown }> = []
afterEach(async () => {
  for (const handle of open.splice(0).reverse()) await handle.close()
})

function newFile(): string {
  return join(folder, `files-${fileCount++}.db`)
}

function persisterAt(filename: string, options: { busyTimeoutMs?: number } = {}): SqlitePersister {
  const persister = createSqlitePersister({ filename, ...options })
  open.push(persister)
  return persister
}

function connect(filename: string, options: BetterSqlite3.Options = {}): BetterSqlite3.Database {
  const database = new BetterSqlite3(filename, options)
  open.push(database)
  return database
}

function session(id: string): SessionData {
  return {
    id,
    summary: id,
    createdAt: '2025-03-01T10:00:00.000Z',
    lastActivity: '2025-03-01T10:00:00.000Z',
    state: 'idle',
    tokenUsage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
  }
}

function message(sessionId: string, seq: number): AnyMessage {
  return {
    id: `m${seq}`,
    sessionId,
    seq,
    type: 'user',
    content: `text ${seq}`,
    timestamp: '2025-03-01T10:00:00.000Z',
  }
}

async function rejection(
  promise: Promise<unknown>,
): Promise<{ code: string; retryable: boolean; message: string; cause?: unknown }> {
  try {
    await promise
  } catch (error) {
    expect(isAgentError(error)).toBe(true)
    return error as { code: string; retryable: boolean; message: string; cause?: unknown }
  }
  throw new Error('expected a rejection')
}

describe('SqlitePersister files and migrations', () => {
  it('creates missing parent folders and migrates an empty file on first use, not on construction', async () => {
    const filename = join(folder, 'nested', 'deeper', '.agentx', 'data', 'agent.db')
    const persister = persisterAt(filename)
    expect(existsSync(join(folder, 'nested'))).toBe(false)
    await persister.saveSession(session('s'))

    const database = connect(filename, { readonly: true })
    const tables = database
      .prepare("select name from sqlite_master where type = 'table' order by name")
      .pluck()
      .all()
    expect(tables).toEqual(['messages', 'schema_migrations', 'session_metadata', 'sessions'])
    expect(database.prepare('select version, name from schema_migrations').all()).toEqual([
      { version: 1, name: 'initial schema' },
      { version: 2, name: 'storage v2: agent names, child sessions, forks, compaction, leases' },
      { version: 3, name: 'listing indexes: top-level sessions, metadata equality' },
    ])
    expect(SQLITE_SCHEMA_VERSION).toBe(3)
    expect(database.pragma('journal_mode', { simple: true })).toBe('wal')
    expect(database.pragma('page_size', { simple: true })).toBe(8192)
    const messageColumns = (database.pragma('table_info(messages)') as Array<{ name: string }>).map(
      (c) => c.name,
    )
    expect(messageColumns).toEqual([
      'session_id',
      'id',
      'seq',
      'type',
      'content',
      'timestamp',
      'usage',
      'stop_reason',
      'incomplete',
      'is_tool_use',
      'tool_name',
      'tool_input',
      'tool_id',
      'tool_result',
      'metadata',
      'extra',
      'agent_name',
      'compaction',
    ])
    const sessionColumns = (database.pragma('table_info(sessions)') as Array<{ name: string }>).map(
      (c) => c.name,
    )
    expect(sessionColumns.slice(-6)).toEqual([
      'active_agent',
      'parent_session_id',
      'parent_tool_use_id',
      'forked_from',
      'lease_owner',
      'lease_expires_at',
    ])
    const foreignKeys = database.pragma('foreign_key_list(messages)') as Array<Record<string, unknown>>
    expect(foreignKeys).toMatchObject([
      { table: 'sessions', from: 'session_id', to: 'id', on_delete: 'CASCADE' },
    ])
    const indexes = (
      database.pragma('index_list(messages)') as Array<{ name: string; unique: number; origin: string }>
    )
      .filter((index) => index.unique === 1)
      .map((index) =>
        (database.pragma(`index_info(${index.name})`) as Array<{ name: string }>).map((c) => c.name),
      )
    expect(indexes).toEqual(
      expect.arrayContaining([
        ['session_id', 'id'],
        ['session_id', 'seq'],
      ]),
    )
  })

  it('turns foreign keys on, so deleting a session cascades to its messages', async () => {
    const filename = newFile()
    const persister = persisterAt(filename)
    await persister.saveSession(session('s'))
    await persister.saveMessage('s', message('s', 0))
    const kysely = await persister.getKysely()
    const { rows } = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(kysely)
    expect(rows).toEqual([{ foreign_keys: 1 }])
    await persister.deleteSession('s')
    const database = connect(filename, { readonly: true })
    expect(database.prepare('select count(*) from messages').pluck().get()).toBe(0)
  })

  it('reopens an existing file with everything kept and without migrating again', async () => {
    const filename = newFile()
    const first = createSqlitePersister({ filename })
    await first.saveSession(session('s'))
    await Promise.all([0, 1, 2].map((seq) => first.saveMessage('s', message('s', seq))))
    await first.close()
    const applied = connect(filename, { readonly: true })
      .prepare('select version, applied_at from schema_migrations')
      .all()
    expect(applied).toHaveLength(3)

    const second = persisterAt(filename)
    expect(await second.getSession('s')).toEqual(session('s'))
    expect(await second.getMessages('s')).toEqual([message('s', 0), message('s', 1), message('s', 2)])
    const rows = connect(filename, { readonly: true })
      .prepare('select version, applied_at from schema_migrations')
      .all()
    expect(rows).toEqual(applied)
  })

  it('migrates a zero-byte file', async () => {
    const filename = newFile()
    writeFileSync(filename, '')
    const persister = persisterAt(filename)
    await persister.saveSession(session('s'))
    expect(await persister.getSession('s')).toEqual(session('s'))
  })

  it('refuses a file whose schema is newer than this package, without changing it', async () => {
    const filename = newFile()
    const first = createSqlitePersister({ filename })
    await first.saveSession(session('s'))
    await first.close()
    const database = new BetterSqlite3(filename)
    database
      .prepare("insert into schema_migrations values (99, 'from the future', '2030-01-01T00:00:00.000Z')")
      .run()
    database.close()

    const persister = persisterAt(filename)
    const error = await rejection(persister.getSession('s'))
    expect(error).toMatchObject({ code: 'PERSISTENCE', retryable: false })
    expect(error.message).toMatch(/schema version 99.*Upgrade @agentx\/persister-sqlite/)
    const versions = connect(filename, { readonly: true })
      .prepare('select version from schema_migrations')
      .pluck()
      .all()
    expect(versions).toEqual([1, 2, 3, 99])
  })

  it('lets two persisters share one file: each sees the other’s writes', async () => {
    const filename = newFile()
    const a = persisterAt(filename)
    const b = persisterAt(filename)
    await Promise.all([a.saveSession(session('from-a')), b.saveSession(session('from-b'))])
    await Promise.all([
      ...[0, 2, 4].map((seq) => a.saveMessage('from-b', message('from-b', seq))),
      ...[1, 3, 5].map((seq) => b.saveMessage('from-b', { ...message('from-b', seq), id: `b${seq}` })),
    ])
    expect((await a.getAllSessions()).map((s) => s.id).sort()).toEqual(['from-a', 'from-b'])
    expect((await b.getMessages('from-b')).map((m) => [m.seq, m.id])).toEqual([
      [0, 'm0'],
      [1, 'b1'],
      [2, 'm2'],
      [3, 'b3'],
      [4, 'm4'],
      [5, 'b5'],
    ])
    await b.deleteSession('from-a')
    expect(await a.getSession('from-a')).toBeNull()
    // Both opened the new file at once; it was migrated exactly once.
    const migrations = connect(filename, { readonly: true })
      .prepare('select version from schema_migrations')
      .all()
    expect(migrations).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }])
  })

  it('rejects a file that is not a SQLite database with a clear PersistenceError and leaves it untouched', async () => {
    const filename = newFile()
    const bytes = Buffer.from(`NOT A DATABASE ${'x'.repeat(5000)}\n`)
    writeFileSync(filename, bytes)
    const before = statSync(filename)
    const persister = persisterAt(filename)

    const error = await rejection(persister.saveSession(session('s')))
    expect(error).toMatchObject({ code: 'PERSISTENCE', retryable: false })
    expect(error.message).toContain(filename)
    expect(error.message).toMatch(/not a SQLite database or is corrupt.*left untouched/)
    expect((error.cause as { code?: string }).code).toBe('SQLITE_NOTADB')
    // Every later call fails the same way; nothing is written, no WAL file appears.
    expect((await rejection(persister.getAllSessions())).code).toBe('PERSISTENCE')
    await persister.close()
    expect(readFileSync(filename).equals(bytes)).toBe(true)
    expect(statSync(filename).mtimeMs).toBe(before.mtimeMs)
    expect(existsSync(`${filename}-wal`)).toBe(false)
    expect(existsSync(`${filename}-journal`)).toBe(false)
  })

  it('rejects a corrupt SQLite file with PERSISTENCE and does not change it', async () => {
    const source = newFile()
    const first = createSqlitePersister({ filename: source })
    await first.saveSession(session('s'))
    await first.close()
    const bytes = readFileSync(source)
    // Keep the SQLite header, scramble the schema page.
    for (let index = 100; index < 8192; index++) bytes[index] = (index * 7) & 0xff
    const filename = newFile()
    writeFileSync(filename, bytes)

    const error = await rejection(persisterAt(filename).getSession('s'))
    expect(error).toMatchObject({ code: 'PERSISTENCE', retryable: false })
    expect(error.message).toMatch(/not a SQLite database or is corrupt/)
    expect(readFileSync(filename).equals(bytes)).toBe(true)
  })

  it('rejects a read-only location with a PersistenceError that names the problem', async () => {
    // As root, permission bits do not stop writes, so use sysfs, which refuses them to everyone.
    const readOnly = process.getuid?.() === 0 ? '/sys/kernel' : join(folder, 'read-only')
    if (readOnly !== '/sys/kernel') {
      mkdirSync(readOnly)
      chmodSync(readOnly, 0o555)
    }
    const inMissingFolder = persisterAt(join(readOnly, 'agentx-missing', 'agent.db'))
    const folderError = await rejection(inMissingFolder.saveSession(session('s')))
    expect(folderError).toMatchObject({ code: 'PERSISTENCE', retryable: false })
    expect(folderError.message).toMatch(/Cannot create the folder .*agentx-missing.*writable location/)

    const inReadOnlyFolder = persisterAt(join(readOnly, 'agentx-test.db'))
    const openError = await rejection(inReadOnlyFolder.saveSession(session('s')))
    expect(openError).toMatchObject({ code: 'PERSISTENCE', retryable: false })
    expect(openError.message).toMatch(/cannot be opened for writing .*SQLITE_(CANTOPEN|READONLY)/)
    expect(existsSync(join(readOnly, 'agentx-test.db'))).toBe(false)
  })

  it('rejects with a retryable BUSY while another connection holds the write lock, and reads still work', async () => {
    const filename = newFile()
    const persister = persisterAt(filename, { busyTimeoutMs: 50 })
    await persister.saveSession(session('s'))
    await persister.saveMessage('s', message('s', 0))
    const other = connect(filename)
    other.prepare('BEGIN IMMEDIATE').run()

    const sessionError = await rejection(persister.saveSession(session('t')))
    expect(sessionError).toMatchObject({ code: 'BUSY', retryable: true })
    expect((sessionError.cause as { code?: string }).code).toMatch(/^SQLITE_BUSY/)
    const batch = await Promise.allSettled([
      persister.saveMessage('s', message('s', 1)),
      persister.saveMessage('s', message('s', 2)),
    ])
    expect(
      batch.map((outcome) => outcome.status === 'rejected' && (outcome.reason as { code: string }).code),
    ).toEqual(['BUSY', 'BUSY'])
    // WAL: readers are not blocked by a writer.
    expect(await persister.getMessages('s')).toEqual([message('s', 0)])

    other.prepare('COMMIT').run()
    await persister.saveMessage('s', message('s', 1))
    expect((await persister.getMessages('s')).map((m) => m.seq)).toEqual([0, 1])
  })

  it('a persister created by the default path layout works from a workspace folder', async () => {
    const workspace = join(folder, 'workspace')
    const persister = persisterAt(join(workspace, '.agentx', 'data', 'agent.db'))
    await persister.saveSession(session('s'))
    expect(existsSync(join(workspace, '.agentx', 'data', 'agent.db'))).toBe(true)
  })
})
