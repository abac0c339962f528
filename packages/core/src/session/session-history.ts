import type { AgentPersister } from '../contracts/agent-persister.js'
import type { AnyMessage } from '../contracts/messages.js'
import { ValidationError } from '../errors/validation-error.js'

const PAGE_SIZE = 1000
/** The first page read backwards when a session loads: most sessions fit, and a compacted one finds its summary in it. */
const FIRST_PAGE = 128

/** A page request of `session.getMessages(query)`. */
export interface MessagesQuery {
  /** At most this many messages. Default is all. */
  limit?: number
  /** Only messages before this seq (exclusive): with `limit`, the last `limit` of them. */
  beforeSeq?: number
  /** Only messages after this seq (exclusive): with `limit`, the first `limit` of them. */
  afterSeq?: number
}

/**
 * The messages of one session as the kernel holds them: loaded from the store on first use (a
 * page at a time), in seq order, and immutable — every message is deeply frozen when it enters,
 * so the same objects can be shown to listeners, returned to callers and sent to the adapter
 * without a copy.
 *
 * A compacted session (DESIGN §10.4) is held **partially**: loading reads the store backwards
 * from the latest message until it meets the latest compaction summary and the messages after
 * its `throughSeq` — what the model needs — so its cost does not depend on how long the
 * conversation was before that point. Older messages stay in the store and {@link page} reads
 * them from there on demand.
 */
export class SessionHistory {
  readonly #persister: AgentPersister | undefined
  readonly #sessionId: string
  #messages: AnyMessage[] | undefined
  /** The first seq held in memory: messages before it are only in the store (`0`: all held). */
  #from = 0
  #loading: Promise<{ messages: AnyMessage[]; from: number }> | undefined

  constructor(persister: AgentPersister | undefined, sessionId: string, messages?: AnyMessage[]) {
    this.#persister = persister
    this.#sessionId = sessionId
    if (messages !== undefined) this.#messages = adopt([...messages])
    else if (persister === undefined) this.#messages = []
  }

  /** Whether the history (or, for a compacted session, what the model needs of it) is in memory. */
  get loaded(): boolean {
    return this.#messages !== undefined
  }

  /**
   * The first seq held in memory: `0` when the whole history is held, otherwise the first message
   * after the latest compaction's `throughSeq` (earlier ones are read from the store on demand).
   */
  get heldFrom(): number {
    return this.#from
  }

  /**
   * What the kernel needs in memory (loads it on first use): the whole history, or — for a
   * compacted session — the messages after the latest compaction's `throughSeq`, that compaction
   * message among them. The array is the kernel's own: do not change it.
   */
  async load(): Promise<readonly AnyMessage[]> {
    if (this.#messages !== undefined) return this.#messages
    this.#loading ??= this.#readRecent()
    try {
      const loaded = await this.#loading
      if (this.#messages === undefined) {
        this.#messages = loaded.messages
        this.#from = loaded.from
      }
      return this.#messages
    } finally {
      this.#loading = undefined
    }
  }

  /** The messages held in memory; only valid after {@link SessionHistory.load}. */
  get messages(): readonly AnyMessage[] {
    return this.#messages ?? []
  }

  /** A frozen copy of {@link SessionHistory.messages}: what application code (a tool) may hold. */
  snapshot(): readonly AnyMessage[] {
    return Object.freeze((this.#messages ?? []).slice())
  }

  /** The seq the next message gets. */
  nextSeq(): number {
    const messages = this.#messages ?? []
    const last = messages[messages.length - 1]
    return last === undefined ? this.#from : last.seq + 1
  }

  /** Adds a message (frozen from now on) at the end. */
  append(message: AnyMessage): AnyMessage {
    const frozen = deepFreeze(message)
    this.#messages?.push(frozen)
    return frozen
  }

  /** Takes the last message back (a send that failed before the model was called). */
  removeLast(id: string): void {
    const messages = this.#messages
    if (messages !== undefined && messages[messages.length - 1]?.id === id) messages.pop()
  }

  /**
   * A page of the history, in seq order: everything (no query), the `limit` messages just before
   * `beforeSeq` (default: the latest), or up to `limit` messages after `afterSeq`. Served from
   * memory where it is held, otherwise reads only that page from the store.
   */
  async page(query: MessagesQuery = {}): Promise<AnyMessage[]> {
    const { limit, beforeSeq, afterSeq } = validateQuery(query)
    if (limit === undefined && beforeSeq === undefined && afterSeq === undefined) {
      const held = await this.load()
      if (this.#from === 0) return [...held]
      return [...(await this.#readBetween(undefined, this.#from)), ...held]
    }
    if (this.#messages !== undefined || this.#persister === undefined) {
      const held = this.#messages ?? []
      const from = this.#from
      if (from === 0 || (afterSeq !== undefined && afterSeq >= from - 1)) {
        return slice(held, limit, beforeSeq, afterSeq)
      }
      if (afterSeq !== undefined && beforeSeq === undefined) {
        // Forward from before what is held: the store up to `from`, then memory.
        const stored = await this.#readBetween(afterSeq, from, limit)
        const rest = limit === undefined ? undefined : limit - stored.length
        return rest === 0 ? stored : [...stored, ...slice(held, rest, undefined, afterSeq)]
      }
      // Backward (from `beforeSeq` or the latest): memory first, then the store before `from`.
      const recent = slice(held, limit, beforeSeq, afterSeq)
      const missing = limit === undefined ? undefined : limit - recent.length
      if (missing === 0) return recent
      const end = Math.min(beforeSeq ?? Number.MAX_SAFE_INTEGER, from)
      const older =
        missing === undefined
          ? await this.#readBetween(afterSeq, end)
          : (await this.#lastBefore(end, missing)).filter((m) => afterSeq === undefined || m.seq > afterSeq)
      return [...older, ...recent]
    }
    if (afterSeq !== undefined && beforeSeq === undefined) {
      const page = await this.#persister.getMessages(
        this.#sessionId,
        limit === undefined ? { afterSeq } : { afterSeq, limit },
      )
      return adopt(page)
    }
    if (limit === undefined) {
      return this.#readBetween(afterSeq, beforeSeq ?? Number.MAX_SAFE_INTEGER)
    }
    const page = await this.#lastBefore(beforeSeq ?? Number.MAX_SAFE_INTEGER, limit)
    return afterSeq === undefined ? page : page.filter((m) => m.seq > afterSeq)
  }

  /** Appends, in order, the messages the store holds after the last one in memory (written by another process). */
  async catchUp(): Promise<void> {
    const persister = this.#persister
    const messages = this.#messages
    if (persister === undefined || messages === undefined) return
    for (;;) {
      const last = messages[messages.length - 1]
      const page = await persister.getMessages(
        this.#sessionId,
        last === undefined ? { limit: PAGE_SIZE } : { afterSeq: last.seq, limit: PAGE_SIZE },
      )
      for (const message of adopt(page)) messages.push(message)
      if (page.length < PAGE_SIZE) return
    }
  }

  /** Drops what is held in memory (the agent closed, or the session left the cache). */
  release(): void {
    this.#messages = undefined
    this.#from = 0
  }

  /** Forgets everything (the session was deleted). */
  clear(): void {
    this.#messages = []
    this.#from = 0
  }

  /**
   * Reads backwards from the latest message, in pages that double from {@link FIRST_PAGE} up to
   * {@link PAGE_SIZE}, until the start of the history or until the latest compaction summary and
   * every message after its `throughSeq` are in.
   */
  async #readRecent(): Promise<{ messages: AnyMessage[]; from: number }> {
    const persister = this.#persister
    if (persister === undefined) return { messages: [], from: 0 }
    const pages: AnyMessage[][] = []
    let from: number | undefined
    let beforeSeq = Number.MAX_SAFE_INTEGER
    let limit = FIRST_PAGE
    for (;;) {
      const page = adopt(await persister.getMessages(this.#sessionId, { beforeSeq, limit }))
      pages.push(page)
      if (from === undefined) {
        for (let i = page.length - 1; i >= 0; i--) {
          const compaction = page[i]!.compaction
          if (compaction !== undefined) {
            from = compaction.throughSeq + 1
            break
          }
        }
      }
      const first = page[0]
      if (first === undefined || page.length < limit || (from !== undefined && first.seq <= from)) break
      beforeSeq = first.seq
      limit = Math.min(limit * 2, PAGE_SIZE)
    }
    const messages: AnyMessage[] = []
    for (let p = pages.length - 1; p >= 0; p--) {
      for (const message of pages[p]!) if (from === undefined || message.seq >= from) messages.push(message)
    }
    return { messages, from: from ?? 0 }
  }

  /** The stored messages with `afterSeq < seq < beforeSeq`, the first `limit` of them (default: all), read forward. */
  async #readBetween(afterSeq: number | undefined, beforeSeq: number, limit?: number): Promise<AnyMessage[]> {
    const persister = this.#persister
    if (persister === undefined) return []
    const result: AnyMessage[] = []
    let after = afterSeq
    for (;;) {
      const want = limit === undefined ? PAGE_SIZE : Math.min(PAGE_SIZE, limit - result.length)
      const page = await persister.getMessages(
        this.#sessionId,
        after === undefined ? { limit: want } : { afterSeq: after, limit: want },
      )
      for (const message of page) {
        if (message.seq >= beforeSeq) return adopt(result)
        result.push(message)
      }
      if (page.length < want || (limit !== undefined && result.length >= limit)) return adopt(result)
      after = page[page.length - 1]!.seq
    }
  }

  /** The last `limit` stored messages before `beforeSeq`, in seq order. */
  async #lastBefore(beforeSeq: number, limit: number): Promise<AnyMessage[]> {
    if (this.#persister === undefined) return []
    return adopt(await this.#persister.getMessages(this.#sessionId, { beforeSeq, limit }))
  }
}

/** Sorts by seq when needed and freezes what a store returned. */
function adopt(messages: AnyMessage[]): AnyMessage[] {
  let sorted = true
  for (let i = 1; i < messages.length; i++) {
    if (messages[i]!.seq < messages[i - 1]!.seq) {
      sorted = false
      break
    }
  }
  if (!sorted) messages.sort((a, b) => a.seq - b.seq)
  for (const message of messages) deepFreeze(message)
  return messages
}

function slice(
  messages: readonly AnyMessage[],
  limit: number | undefined,
  beforeSeq: number | undefined,
  afterSeq: number | undefined,
): AnyMessage[] {
  let start = afterSeq === undefined ? 0 : firstIndexAbove(messages, afterSeq)
  let end = beforeSeq === undefined ? messages.length : firstIndexAbove(messages, beforeSeq - 1)
  if (limit !== undefined) {
    if (afterSeq !== undefined && beforeSeq === undefined) end = Math.min(end, start + limit)
    else start = Math.max(start, end - limit)
  }
  return start >= end ? [] : messages.slice(start, end)
}

/** The index of the first message whose seq is greater than `seq` (binary search). */
function firstIndexAbove(messages: readonly AnyMessage[], seq: number): number {
  let low = 0
  let high = messages.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (messages[middle]!.seq <= seq) low = middle + 1
    else high = middle
  }
  return low
}

function validateQuery(query: unknown): MessagesQuery {
  if (query === undefined) return {}
  if (typeof query !== 'object' || query === null || Array.isArray(query)) {
    throw new ValidationError('getMessages query must be an object such as { limit: 50 }.')
  }
  const value = query as Record<string, unknown>
  for (const key of Object.keys(value)) {
    if (key !== 'limit' && key !== 'beforeSeq' && key !== 'afterSeq') {
      throw new ValidationError(`Unknown getMessages query key '${key}'; use limit, beforeSeq or afterSeq.`)
    }
  }
  for (const key of ['limit', 'beforeSeq', 'afterSeq'] as const) {
    const number = value[key]
    // `afterSeq: -1` pages forward from the first message (seq 0), as the persister takes it.
    const least = key === 'afterSeq' ? -1 : 0
    if (
      number !== undefined &&
      (typeof number !== 'number' || !Number.isSafeInteger(number) || number < least)
    ) {
      throw new ValidationError(
        key === 'afterSeq'
          ? 'getMessages afterSeq must be an integer of -1 or more (-1 starts at the first message).'
          : `getMessages ${key} must be a non-negative integer.`,
      )
    }
  }
  return value as MessagesQuery
}

/** Freezes a plain JSON value and everything in it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value
  Object.freeze(value)
  if (Array.isArray(value)) {
    for (const item of value) deepFreeze(item)
  } else {
    for (const key in value) deepFreeze((value as Record<string, unknown>)[key])
  }
  return value
}
