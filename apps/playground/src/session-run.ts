/** One event of a run as the wire carries it: its run-local id and its JSON-safe data. */
export interface RunEntry {
  /** 1, 2, 3… within the run; sent as the SSE `id:` so a client can resume after it. */
  id: number
  /** The event type (`text-delta`, `message`, …), sent as the SSE `event:`. */
  type: string
  data: unknown
}

/** Receives a run's entries, then `end` once. */
export interface RunSubscriber {
  entry(entry: RunEntry): void
  end(): void
}

/** How many entries a run keeps for clients that reattach (a very long reply drops its oldest). */
const MAX_ENTRIES = 20_000

/**
 * One send (or retry) of a session that runs on the server whatever its clients do: the events it
 * produced so far, kept so that a reloaded page or a second tab can reattach, and the clients
 * watching it. A client that goes away only stops watching; the send goes on.
 */
export class SessionRun {
  readonly sessionId: string
  readonly startedAt: string = new Date().toISOString()
  readonly #entries: RunEntry[] = []
  readonly #subscribers = new Set<RunSubscriber>()
  #nextId = 1
  #ended = false
  /** The id of the last top-level `message` entry (0 before the first): where the current model response began. */
  #lastMessageId = 0
  #resolveEnded!: () => void
  /** Resolves when the run has ended (its send settled and its bookkeeping is done). */
  readonly ended: Promise<void> = new Promise((resolve) => {
    this.#resolveEnded = resolve
  })

  constructor(sessionId: string) {
    this.sessionId = sessionId
  }

  get isEnded(): boolean {
    return this.#ended
  }

  /** How many events the run produced so far. */
  get size(): number {
    return this.#nextId - 1
  }

  /**
   * The id after which a client that already shows every stored message should replay: the last
   * `message` event, so the reply being streamed right now is rebuilt from its first delta.
   */
  get resumeAfter(): number {
    return this.#lastMessageId
  }

  /** Records an event and hands it to every watcher. */
  push(type: string, data: unknown): void {
    if (this.#ended) return
    const entry: RunEntry = { id: this.#nextId++, type, data }
    if (type === 'message') this.#lastMessageId = entry.id
    this.#entries.push(entry)
    if (this.#entries.length > MAX_ENTRIES) this.#entries.splice(0, this.#entries.length - MAX_ENTRIES / 2)
    for (const subscriber of this.#subscribers) subscriber.entry(entry)
  }

  /** Whether an event of this type was pushed. */
  has(type: string): boolean {
    return this.#entries.some((entry) => entry.type === type)
  }

  /** Ends the run: every watcher gets `end`, later watchers get it at once. */
  end(): void {
    if (this.#ended) return
    this.#ended = true
    for (const subscriber of this.#subscribers) subscriber.end()
    this.#subscribers.clear()
    this.#resolveEnded()
  }

  /**
   * Watches the run. With `after`, first replays the kept events whose id is greater (`0`: all of
   * them); without it, starts from the current point. Returns the function that stops watching.
   */
  subscribe(subscriber: RunSubscriber, after?: number): () => void {
    if (after !== undefined) for (const entry of this.#entries) if (entry.id > after) subscriber.entry(entry)
    if (this.#ended) {
      subscriber.end()
      return () => undefined
    }
    this.#subscribers.add(subscriber)
    return () => {
      this.#subscribers.delete(subscriber)
    }
  }
}
