// Reads the SQLite file the agents write, directly (not through a persister), so the tests check
// what is on disk.
import Database from 'better-sqlite3'

/** A row of the `messages` table, with its JSON content parsed. */
export interface StoredMessage {
  seq: number
  type: string
  content: unknown
  stopReason: string | null
}

/** The columns of a `sessions` row the tests look at. */
export interface StoredSession {
  id: string
  state: string
  summary: string
  providerSessionId: string | null
  leaseOwner: string | null
}

function open<T>(filename: string, read: (database: Database.Database) => T): T {
  const database = new Database(filename, { fileMustExist: true, timeout: 5_000 })
  try {
    return read(database)
  } finally {
    database.close()
  }
}

/** The session's messages as stored, in seq order. */
export function storedMessages(filename: string, sessionId: string): StoredMessage[] {
  return open(filename, (database) =>
    database
      .prepare<[string], { seq: number; type: string; content: string; stop_reason: string | null }>(
        'SELECT seq, type, content, stop_reason FROM messages WHERE session_id = ? ORDER BY seq',
      )
      .all(sessionId)
      .map((row) => ({
        seq: row.seq,
        type: row.type,
        content: JSON.parse(row.content) as unknown,
        stopReason: row.stop_reason,
      })),
  )
}

/** The session's row, or `undefined`. */
export function storedSession(filename: string, sessionId: string): StoredSession | undefined {
  return open(filename, (database) => {
    const row = database
      .prepare<
        [string],
        {
          id: string
          state: string
          summary: string
          provider_session_id: string | null
          lease_owner: string | null
        }
      >('SELECT id, state, summary, provider_session_id, lease_owner FROM sessions WHERE id = ?')
      .get(sessionId)
    return row === undefined
      ? undefined
      : {
          id: row.id,
          state: row.state,
          summary: row.summary,
          providerSessionId: row.provider_session_id,
          leaseOwner: row.lease_owner,
        }
  })
}

/** Ids of the sessions stored in `state`. */
export function sessionIdsIn(filename: string, state: string): string[] {
  return open(filename, (database) =>
    database
      .prepare<[string], { id: string }>('SELECT id FROM sessions WHERE state = ? ORDER BY id')
      .all(state)
      .map((row) => row.id),
  )
}

/** The `tool_result` blocks of a stored message's content. */
export function toolResultsOf(message: StoredMessage | undefined): Array<{
  type: 'tool_result'
  toolUseId: string
  content: unknown
  isError?: boolean
}> {
  const content = message?.content
  if (!Array.isArray(content)) return []
  return content.filter((block) => block?.type === 'tool_result')
}

/** The `tool_use` blocks of a stored message's content. */
export function toolUsesOf(
  message: StoredMessage | undefined,
): Array<{ type: 'tool_use'; id: string; name: string; input: unknown }> {
  const content = message?.content
  if (!Array.isArray(content)) return []
  return content.filter((block) => block?.type === 'tool_use')
}
