import type { AgentPersister, SessionData } from '../contracts/agent-persister.js'
import type { AnyMessage } from '../contracts/messages.js'
import type { SessionState } from '../contracts/session-state.js'
import { SessionStateError } from '../errors/session-state-error.js'
import { ValidationError } from '../errors/validation-error.js'
import { cloneJson } from '../persistence/json-copy.js'
import type { Tool } from '../tools/tool.js'
import { emptyUsage } from '../util/token-usage.js'
import { uuidv7 } from '../util/uuid-v7.js'
import { withRetry } from '../util/with-retry.js'
import { findWaitingBatch } from './approvals.js'
import { describe, isPlainObject, rejectUnknownKeys } from './validate-input.js'

/** Options of `session.fork()`. */
export interface ForkOptions {
  /** The last message copied (inclusive): the seq of a message of the session. Default is the last message. */
  throughSeq?: number
  /** The fork's summary. Default is the source's summary. */
  summary?: string
  /** The fork's metadata (replaces the source's). Default is a copy of the source's metadata. */
  metadata?: Record<string, unknown>
}

/** A fork to be written: the new session and the copies of its messages, in seq order. */
export interface ForkPlan {
  data: SessionData
  messages: AnyMessage[]
}

const FORK_KEYS = ['throughSeq', 'summary', 'metadata'] as const satisfies ReadonlyArray<keyof ForkOptions>
/** States a fork of the whole conversation keeps, so that `retry()` works in the copy too. */
const RESUMABLE: ReadonlySet<SessionState> = new Set(['error', 'aborted', 'interrupted'])

const invalid = (message: string) => new ValidationError(message)

/** Checks the options of `session.fork()` and returns a copy the fork owns; bad input is a {@link ValidationError}. */
export function validateForkOptions(options: unknown): ForkOptions {
  if (options === undefined) return {}
  if (!isPlainObject(options)) throw invalid(`fork options must be an object, got ${describe(options)}.`)
  rejectUnknownKeys(options, FORK_KEYS, 'fork option', invalid)
  const checked: ForkOptions = {}
  const { throughSeq, summary, metadata } = options
  if (throughSeq !== undefined) {
    if (typeof throughSeq !== 'number' || !Number.isSafeInteger(throughSeq) || throughSeq < 0) {
      throw invalid(`throughSeq must be the seq of a message (an integer >= 0), got ${describe(throughSeq)}.`)
    }
    checked.throughSeq = throughSeq
  }
  if (summary !== undefined) {
    if (typeof summary !== 'string') throw invalid(`summary must be a string, got ${describe(summary)}.`)
    checked.summary = summary
  }
  if (metadata !== undefined) {
    if (!isPlainObject(metadata)) throw invalid(`metadata must be an object, got ${describe(metadata)}.`)
    checked.metadata = cloneJson(metadata, 'metadata')
  }
  return checked
}

/**
 * Plans a fork of `source` (DESIGN §10.2): a new session (new UUIDv7 id) with copies of the
 * messages up to `throughSeq` — new ids, the same seqs, every other field as stored — and
 * `forkedFrom = { sessionId, seq }` naming the last seq copied. The provider session id, token
 * usage, parent links and lease are not copied. Its state says what the copy can do next:
 * `waiting_input` when the copy ends in a tool batch whose calls wait for an approval or a client
 * tool's answer (answer them in the fork), the source's `error`/`aborted`/`interrupted` when the
 * whole conversation is copied (so `retry()` works in the fork), `idle` otherwise.
 *
 * Throws {@link ValidationError} when `throughSeq` names no message, {@link SessionStateError} when
 * the source has no message to copy (create a session instead).
 */
export async function planFork(
  source: SessionData,
  history: readonly AnyMessage[],
  options: ForkOptions,
  tools: Map<string, Tool>,
): Promise<ForkPlan> {
  const last = history[history.length - 1]
  if (last === undefined) {
    throw new SessionStateError(
      `Session ${source.id} has no messages to fork; create a new session instead.`,
      { state: source.state },
    )
  }
  const throughSeq = options.throughSeq ?? last.seq
  const end = indexAfter(history, throughSeq)
  if (end === 0 || history[end - 1]!.seq !== throughSeq) {
    throw new ValidationError(
      `Session ${source.id} has no message at seq ${throughSeq} (its messages run from seq ${history[0]!.seq} to ${last.seq}).`,
    )
  }
  const id = uuidv7()
  const messages = history.slice(0, end).map((message) => ({ ...message, id: uuidv7(), sessionId: id }))
  const now = new Date().toISOString()
  const data: SessionData = {
    id,
    summary: options.summary ?? source.summary,
    createdAt: now,
    lastActivity: now,
    state: 'idle',
    tokenUsage: emptyUsage(),
    forkedFrom: { sessionId: source.id, seq: throughSeq },
  }
  if (source.cwd !== undefined) data.cwd = source.cwd
  if (source.model !== undefined) data.model = source.model
  if (source.systemPrompt !== undefined) data.systemPrompt = source.systemPrompt
  if (source.userId !== undefined) data.userId = source.userId
  if (source.appName !== undefined) data.appName = source.appName
  const metadata =
    options.metadata ?? (source.metadata === undefined ? undefined : cloneJson(source.metadata))
  if (metadata !== undefined) data.metadata = metadata
  const whole = end === history.length
  const activeAgent = whole ? source.activeAgent : lastAgentName(messages)
  if (activeAgent !== undefined) data.activeAgent = activeAgent

  const waiting = await findWaitingBatch(messages, tools, {
    sessionId: id,
    signal: new AbortController().signal,
  })
  if (waiting !== undefined && waiting.pending.length > 0) data.state = 'waiting_input'
  else if (whole && RESUMABLE.has(source.state)) data.state = source.state
  return { data, messages }
}

/**
 * Writes a planned fork: the session first (a store may check that a message's session exists),
 * then every message in the same tick, so a store that batches the writes of one tick writes them
 * together (SQLite: one transaction per `maxBatchSize` messages; PostgreSQL: one multi-row
 * statement per batch) instead of one write per message. Transient failures retry the whole
 * (idempotent) write; a fork that still fails is deleted again, as far as the store lets it, and
 * the error is thrown.
 */
export async function writeFork(persister: AgentPersister, plan: ForkPlan): Promise<void> {
  const { data, messages } = plan
  try {
    await withRetry(async () => {
      await persister.saveSession(data)
      const results = await Promise.allSettled(
        messages.map((message) => persister.saveMessage(data.id, message)),
      )
      const failed = results.find((result) => result.status === 'rejected')
      if (failed !== undefined) throw (failed as PromiseRejectedResult).reason
    })
  } catch (error) {
    await persister.deleteSession(data.id).catch(() => undefined)
    throw error
  }
}

const READ_PAGE = 1000

/**
 * A session as the store holds it: its data and all its messages (read a page at a time), or
 * `null` when it is not stored. What a fork copies when several processes share the store.
 */
export async function readStoredSession(
  persister: AgentPersister,
  id: string,
): Promise<{ data: SessionData; history: AnyMessage[] } | null> {
  const data = await persister.getSession(id)
  if (data === null) return null
  const history: AnyMessage[] = []
  for (;;) {
    const last = history[history.length - 1]
    const page = await persister.getMessages(
      id,
      last === undefined ? { limit: READ_PAGE } : { afterSeq: last.seq, limit: READ_PAGE },
    )
    for (const message of page) history.push(message)
    if (page.length < READ_PAGE) break
  }
  return { data, history }
}

/** The index just after the last message whose seq is at most `seq` (binary search; seqs ascend). */
function indexAfter(messages: readonly AnyMessage[], seq: number): number {
  let low = 0
  let high = messages.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (messages[middle]!.seq <= seq) low = middle + 1
    else high = middle
  }
  return low
}

function lastAgentName(messages: readonly AnyMessage[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const name = messages[i]!.agentName
    if (messages[i]!.type === 'agent' && name !== undefined) return name
  }
  return undefined
}
