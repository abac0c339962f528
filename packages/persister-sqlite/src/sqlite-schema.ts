import type { Generated } from 'kysely'

/**
 * The `sessions` table: one row per `SessionData` of `@agentx/core`.
 *
 * Optional fields that were absent are `NULL`. JSON fields (`token_usage`, `metadata`) are JSON
 * text. `id_order` is the id as UTF-16BE bytes, so that ties on `last_activity` sort exactly like
 * `compareByActivity` in `@agentx/core` (UTF-16 code units; SQLite's BINARY collation on UTF-8 text
 * sorts U+E000–U+FFFF after astral characters instead).
 */
export interface SessionsTable {
  id: string
  id_order: Uint8Array
  summary: string
  created_at: string
  last_activity: string
  cwd: string | null
  model: string | null
  system_prompt: string | null
  state: string
  provider_session_id: string | null
  /** JSON text of a `TokenUsage`. */
  token_usage: string
  user_id: string | null
  app_name: string | null
  /** JSON text of an object, or `NULL` when the session has no metadata. */
  metadata: string | null
  /**
   * JSON text of fields that no column holds exactly: properties unknown to this schema and
   * strings with unpaired surrogates (their column then holds a readable, well-formed copy).
   * Read back over the columns. `NULL` when there are none.
   */
  extra: string | null
  /** The profile that answered last (`activeAgent`), or `NULL`. Since schema 2. */
  active_agent: string | null
  /** The parent of a child session (`parentSessionId`), or `NULL`; indexed. Since schema 2. */
  parent_session_id: string | null
  /** `parentToolUseId`, or `NULL`. Since schema 2. */
  parent_tool_use_id: string | null
  /** JSON text of `forkedFrom` (`{ sessionId, seq }`), or `NULL`. Since schema 2. */
  forked_from: string | null
  /**
   * The owner of the session's lease, or `NULL` when none was claimed or it was released. Never
   * part of `SessionData`; written only by `claimSession`/`releaseSession`. Since schema 2.
   */
  lease_owner: Generated<string | null>
  /** When the lease ends, in ms since the epoch, or `NULL`. Since schema 2. */
  lease_expires_at: Generated<number | null>
}

/**
 * The `messages` table: one row per `AnyMessage`, keyed by `(session_id, id)` so the same message
 * id in two sessions never mixes; `(session_id, seq)` is unique.
 *
 * The `is_tool_use` … `tool_result` columns are derived from `content` for querying (the first
 * `tool_use` block's name, id and input; the first `tool_result` block's tool use id and content)
 * and are never read back: `content` is the source of truth.
 */
export interface MessagesTable {
  session_id: string
  id: string
  seq: number
  type: string
  /** JSON text of the content: a JSON string for string content, a JSON array for blocks. */
  content: string
  timestamp: string
  /** JSON text of a `TokenUsage`, or `NULL`. */
  usage: string | null
  stop_reason: string | null
  /** `1`, `0`, or `NULL` when the message has no `incomplete` field. */
  incomplete: number | null
  /** `1` when `content` holds a `tool_use` block, else `0`. */
  is_tool_use: Generated<number>
  tool_name: string | null
  /** JSON text of the first `tool_use` block's input. */
  tool_input: string | null
  /** The first `tool_use` block's id, else the first `tool_result` block's `toolUseId`. */
  tool_id: string | null
  /** JSON text of the first `tool_result` block's content. */
  tool_result: string | null
  /** JSON text of an object, or `NULL`. */
  metadata: string | null
  /** Like {@link SessionsTable.extra}. */
  extra: string | null
  /** The profile that wrote the message (`agentName`), or `NULL`; indexed. Since schema 2. */
  agent_name: string | null
  /** JSON text of `compaction` (`{ throughSeq }`), or `NULL`. Since schema 2. */
  compaction: string | null
}

/**
 * The `session_metadata` table (since schema 3): one row per top-level key of a session's
 * `metadata` whose value is a string, a number or a boolean, with the session's listing order,
 * indexed by `(key, value_type, value, last_activity, id_order)` for `listSessions({ metadata })`.
 * Triggers on `sessions` keep it equal to the session's columns; never write it yourself.
 */
export interface SessionMetadataTable {
  session_id: string
  key: string
  /** `'string'`, `'number'` or `'boolean'`. */
  value_type: string
  /** The value: text, an integer or a real, or `1` / `0` for a boolean. */
  value: string | number
  /** The session's `last_activity`, for reading matches in listing order. */
  last_activity: string
  /** The session's `id_order`. */
  id_order: Uint8Array
}

/** The `schema_migrations` table: one row per applied migration. */
export interface SchemaMigrationsTable {
  version: number
  name: string
  /** ISO-8601 UTC. */
  applied_at: string
}

/**
 * The Kysely database type of the SQLite schema, for typed queries of your own through
 * `SqlitePersister.getKysely()`.
 */
export interface Database {
  sessions: SessionsTable
  messages: MessagesTable
  session_metadata: SessionMetadataTable
  schema_migrations: SchemaMigrationsTable
}
