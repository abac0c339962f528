// Reads the SQLite file the agents write, directly (not through a persister), so the tests check
// what is on disk.
import Database from 'better-sqlite3'

/** A row of the `messages` table, with its JSON content parsed. */
export interface StoredMessage {
  seq: number
  type: string
  content: unknown
  /** The profile that wrote the message (`agent_name`), or `null`. */
  agentName: string | null
  stopReason: string | null
}

/** The columns of a `sessions` row the tests look at. */
export interface StoredSession {
  id: string
  state: string
  summary: string
  providerSessionId: string | null
  activeAgent: string | null
  parentSessionId: string | null
  parentToolUseId: string | null
  tokenUsage: { inputTokens: number; outputTokens: number; totalTokens?: number }
  leaseOwner: string | null
}

interface SessionRow {
  id: string
  state: string
  summary: string
  provider_session_id: string | null
  active_agent: string | null
  parent_session_id: string | null
  parent_tool_use_id: string | null
  token_usage: string
  lease_owner: string | null
}

const SESSION_COLUMNS =
  'id, state, summary, provider_session_id, active_agent, parent_session_id, parent_tool_use_id, token_usage, lease_owner'

function open<T>(filename: string, read: (database: Database.Database) => T): T {
  const database = new Database(filename, { fileMustExist: true, timeout: 5_000 })
  try {
    return read(database)
  } finally {
    database.close()
  }
}

function toSession(row: SessionRow): StoredSession {
  return {
    id: row.id,
    state: row.state,
    summary: row.summary,
    providerSessionId: row.provider_session_id,
    activeAgent: row.active_agent,
    parentSessionId: row.parent_session_id,
    parentToolUseId: row.parent_tool_use_id,
    tokenUsage: JSON.parse(row.token_usage) as StoredSession['tokenUsage'],
    leaseOwner: row.lease_owner,
  }
}

/** The session's messages as stored, in seq order. */
export function storedMessages(filename: string, sessionId: string): StoredMessage[] {
  return open(filename, (database) =>
    database
      .prepare<
        [string],
        { seq: number; type: string; content: string; agent_name: string | null; stop_reason: string | null }
      >('SELECT seq, type, content, agent_name, stop_reason FROM messages WHERE session_id = ? ORDER BY seq')
      .all(sessionId)
      .map((row) => ({
        seq: row.seq,
        type: row.type,
        content: JSON.parse(row.content) as unknown,
        agentName: row.agent_name,
        stopReason: row.stop_reason,
      })),
  )
}

/** `[type, agentName]` of each stored message of the session, in seq order. */
export function storedTurns(filename: string, sessionId: string): Array<[string, string | null]> {
  return storedMessages(filename, sessionId).map((message) => [message.type, message.agentName])
}

/** The session's row, or `undefined`. */
export function storedSession(filename: string, sessionId: string): StoredSession | undefined {
  return open(filename, (database) => {
    const row = database
      .prepare<[string], SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = ?`)
      .get(sessionId)
    return row === undefined ? undefined : toSession(row)
  })
}

/** Every row of the `sessions` table, by id. */
export function storedSessions(filename: string): StoredSession[] {
  return open(filename, (database) =>
    database
      .prepare<[], SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions ORDER BY id`)
      .all()
      .map(toSession),
  )
}

/** How many rows of the `messages` table belong to the session. */
export function storedMessageCount(filename: string, sessionId: string): number {
  return open(
    filename,
    (database) =>
      database
        .prepare<[string], { count: number }>('SELECT count(*) AS count FROM messages WHERE session_id = ?')
        .get(sessionId)!.count,
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
