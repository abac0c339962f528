import type { ColumnType, Generated } from 'kysely'

/**
 * A `jsonb` column: written as JSON text, read back as whatever the pool's type parser returns
 * (the persister itself reads these columns as `::text`). Strings inside are encoded as described
 * in the package README ("NUL and unpaired surrogates").
 */
export type JsonbColumn = ColumnType<unknown, string, string>

/**
 * The `sessions` table: one row per `SessionData` of `@agentx/core`.
 *
 * Optional fields that were absent are `NULL`. Text columns use the `"C"` collation (byte order,
 * case-sensitive, no locale). `id_order` is the id as UTF-16BE bytes, so that ties on
 * `last_activity` sort exactly like `compareByActivity` in `@agentx/core` (UTF-16 code units).
 * Timestamps are the ISO-8601 strings as given, so they read back unchanged.
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
  /** A `TokenUsage`. */
  token_usage: JsonbColumn
  user_id: string | null
  app_name: string | null
  /** An object, or `NULL` when the session has no metadata. */
  metadata: JsonbColumn | null
  /** Properties no other column holds (from a newer `@agentx/core`), or `NULL`. */
  extra: JsonbColumn | null
  /** The profile that answered last (`activeAgent`), or `NULL`. Since schema 2. */
  active_agent: string | null
  /** The parent of a child session (`parentSessionId`), or `NULL`; indexed. Since schema 2. */
  parent_session_id: string | null
  /** `parentToolUseId`, or `NULL`. Since schema 2. */
  parent_tool_use_id: string | null
  /** `forkedFrom` (`{ sessionId, seq }`), or `NULL`. Since schema 2. */
  forked_from: JsonbColumn | null
  /**
   * The owner of the session's lease, or `NULL` when none was claimed or it was released. Never
   * part of `SessionData`; written only by `claimSession`/`releaseSession`. Since schema 2.
   */
  lease_owner: Generated<string | null>
  /** When the lease ends, on the server's clock, or `NULL`. Since schema 2. */
  lease_expires_at: Generated<Date | null>
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
  /** `bigint`: any safe integer. */
  seq: ColumnType<string, number, number>
  type: string
  /** A JSON string for string content, a JSON array for blocks. */
  content: JsonbColumn
  timestamp: string
  /** A `TokenUsage`, or `NULL`. */
  usage: JsonbColumn | null
  stop_reason: string | null
  /** `NULL` when the message has no `incomplete` field. */
  incomplete: boolean | null
  /** `true` when `content` holds a `tool_use` block. */
  is_tool_use: Generated<boolean>
  tool_name: string | null
  /** The first `tool_use` block's input. */
  tool_input: JsonbColumn | null
  /** The first `tool_use` block's id, else the first `tool_result` block's `toolUseId`. */
  tool_id: string | null
  /** The first `tool_result` block's content. */
  tool_result: JsonbColumn | null
  /** An object, or `NULL`. */
  metadata: JsonbColumn | null
  /** Like {@link SessionsTable.extra}. */
  extra: JsonbColumn | null
  /** The profile that wrote the message (`agentName`), or `NULL`; indexed. Since schema 2. */
  agent_name: string | null
  /** `compaction` (`{ throughSeq }`), or `NULL`. Since schema 2. */
  compaction: JsonbColumn | null
}

/** The `agentx_schema_migrations` table: one row per applied migration. */
export interface SchemaMigrationsTable {
  version: number
  name: string
  applied_at: ColumnType<Date, string | undefined, never>
}

/**
 * The Kysely database type of the PostgreSQL schema, for typed queries of your own through
 * `PostgresPersister.getKysely()`.
 */
export interface Database {
  sessions: SessionsTable
  messages: MessagesTable
  agentx_schema_migrations: SchemaMigrationsTable
}
