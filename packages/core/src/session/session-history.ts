import type { AgentPersister } from '../contracts/agent-persister.js'
import type { AnyMessage } from '../contracts/messages.js'
import { ValidationError } from '../errors/validation-error.js'

const PAGE_SIZE = 1000

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
 */
export class SessionHistory {
  readonly #persister: AgentPersister | undefined
  readonly #sessionId: string
  #messages: AnyMessage[] | undefined
  #loading: Promise<AnyMessage[]> | undefined

  constructor(persister: AgentPersister | undefined, sessionId: string, messages?: AnyMessage[]) {
    this.#persister = persister
    this.#sessionId = sessionId
    if (messages !== undefined) this.#messages = adopt([...messages])
    else if (persister === undefined) this.#messages = []
  }

  /** Whether the whole history is in memory. */
  get loaded(): boolean {
    return this.#messages !== undefined
  }

  /** The whole history (loads it on first use). The array is the kernel's own: do not change it. */
  async load(): Promise<readonly AnyMessage[]> {
    if (this.#messages !== undefined) return this.#messages
    this.#loading ??= this.#readAll()
    try {
      const loaded = await this.#loading
      this.#messages ??= loaded
      return this.#messages
    } finally {
      this.#loading = undefined
    }
  }

  /** The loaded history; only valid after {@link SessionHistory.load}. */
  get messages(): readonly AnyMessage[] {
    return this.#messages ?? []
  }

  /** The seq the next message gets. */
  nextSeq(): number {
    const messages = this.#messages ?? []
    const last = messages[messages.length - 1]
    return last === undefined ? 0 : last.seq + 1
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
   * memory when the history is loaded, otherwise reads only that page from the store.
   */
  async page(query: MessagesQuery = {}): Promise<AnyMessage[]> {
    const { limit, beforeSeq, afterSeq } = validateQuery(query)
    if (limit === undefined && beforeSeq === undefined && afterSeq === undefined)
      return [...(await this.load())]
    if (this.#messages !== undefined || this.#persister === undefined) {
      return slice(this.#messages ?? [], limit, beforeSeq, afterSeq)
    }
    if (afterSeq !== undefined && beforeSeq === undefined) {
      const page = await this.#persister.getMessages(
        this.#sessionId,
        limit === undefined ? { afterSeq } : { afterSeq, limit },
      )
      return adopt(page)
    }
    if (limit === undefined) {
      return slice([...(await this.load())], limit, beforeSeq, afterSeq)
    }
    const page = await this.#persister.getMessages(this.#sessionId, {
      beforeSeq: beforeSeq ?? Number.MAX_SAFE_INTEGER,
      limit,
    })
    return adopt(afterSeq === undefined ? page : page.filter((m) => m.seq > afterSeq))
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
  }

  /** Forgets everything (the session was deleted). */
  clear(): void {
    this.#messages = []
  }

  async #readAll(): Promise<AnyMessage[]> {
    const persister = this.#persister
    if (persister === undefined) return []
    const loaded: AnyMessage[] = []
    let afterSeq: number | undefined
    for (;;) {
      const page = await persister.getMessages(
        this.#sessionId,
        afterSeq === undefined ? { limit: PAGE_SIZE } : { afterSeq, limit: PAGE_SIZE },
      )
      for (const message of page) loaded.push(message)
      if (page.length < PAGE_SIZE) break
      afterSeq = page[page.length - 1]!.seq
    }
    return adopt(loaded)
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
    if (number !== undefined && (typeof number !== 'number' || !Number.isSafeInteger(number) || number < 0)) {
      throw new ValidationError(`getMessages ${key} must be a non-negative integer.`)
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
