import type { AdapterMessage, AdapterStreamOptions, AgentAdapter } from '../contracts/agent-adapter.js'
import type { ContentBlock } from '../contracts/messages.js'
import { AdapterError } from '../errors/adapter-error.js'
import { isAgentError } from '../errors/agent-error.js'
import { sleep } from '../util/abort.js'
import { thrownText } from '../util/thrown-text.js'

/** One answer of a {@link ScriptedAdapter}: events to yield, then optionally an error to throw. */
export interface ScriptedTurn {
  events: AdapterMessage[]
  /** Thrown after the events. */
  error?: unknown
  /** Waited before each event (and before the error), abortable. Default is `0`. */
  delayMs?: number
  /**
   * An abort point: after the events, hang (like a stalled provider) until the request's signal
   * aborts, then throw kind `aborted`. Default is `false`.
   */
  waitForAbort?: boolean
}

/** A recorded `stream()` call. */
export interface ScriptedCall {
  prompt: string | ContentBlock[]
  options: AdapterStreamOptions
}

/** Options of {@link ScriptedAdapter}. */
export interface ScriptedAdapterOptions {
  /** `getName()`. Default is `'scripted'`. */
  name?: string
}

/**
 * A test double of {@link AgentAdapter}: each `stream()` call plays the next turn of a script.
 *
 * A turn is an array of {@link AdapterMessage}s or a {@link ScriptedTurn} with an error and a delay.
 * Events are yielded as given (not copied): the kernel never changes what an adapter yields.
 * It honours `options.signal` like a real adapter (throws kind `aborted`), and records every call
 * in {@link ScriptedAdapter.calls}. A call with no turn left throws an `AdapterError`.
 */
export class ScriptedAdapter implements AgentAdapter {
  readonly specificationVersion = 'v1' as const
  /** Every `stream()` call so far, with its prompt and options. */
  readonly calls: ScriptedCall[] = []
  readonly #turns: Array<AdapterMessage[] | ScriptedTurn>
  readonly #name: string

  constructor(turns: Array<AdapterMessage[] | ScriptedTurn> = [], options: ScriptedAdapterOptions = {}) {
    this.#turns = [...turns]
    this.#name = options.name ?? 'scripted'
  }

  getName(): string {
    return this.#name
  }

  /** Appends turns to the script. */
  push(...turns: Array<AdapterMessage[] | ScriptedTurn>): void {
    this.#turns.push(...turns)
  }

  /** Turns not played yet. */
  get remaining(): number {
    return this.#turns.length
  }

  async *stream(
    prompt: string | ContentBlock[],
    options: AdapterStreamOptions,
  ): AsyncIterable<AdapterMessage> {
    this.calls.push({ prompt, options })
    const next = this.#turns.shift()
    if (next === undefined) {
      throw new AdapterError(`ScriptedAdapter has no turn left for call ${this.calls.length}.`, {
        kind: 'unknown',
        provider: this.#name,
        retryable: false,
      })
    }
    const turn: ScriptedTurn = Array.isArray(next) ? { events: next } : next
    const signal = options.signal
    const delayMs = turn.delayMs ?? 0
    // The common case (no delay) yields the script's events as they are: no copy and no extra
    // await per event, so a test suite on the scripted adapter runs at the kernel's own speed.
    for (const event of turn.events) {
      if (delayMs > 0) await this.#wait(delayMs, signal)
      else this.#throwIfAborted(signal)
      yield event
    }
    if (turn.waitForAbort) {
      await new Promise<void>((resolve) => {
        if (!signal || signal.aborted) resolve()
        else signal.addEventListener('abort', () => resolve(), { once: true })
      })
      this.#throwIfAborted(signal)
    }
    if (turn.error !== undefined) {
      if (delayMs > 0) await this.#wait(delayMs, signal)
      this.#throwIfAborted(signal)
      const error = turn.error
      if (isAgentError(error)) throw error
      throw new AdapterError(thrownText(error), {
        kind: 'unknown',
        provider: this.#name,
        cause: error,
      })
    }
    this.#throwIfAborted(signal)
  }

  async #wait(delayMs: number, signal: AbortSignal | undefined): Promise<void> {
    this.#throwIfAborted(signal)
    await sleep(delayMs, signal).catch(() => this.#throwIfAborted(signal))
    this.#throwIfAborted(signal)
  }

  #throwIfAborted(signal: AbortSignal | undefined): void {
    if (signal?.aborted) {
      throw new AdapterError('The request was aborted.', {
        kind: 'aborted',
        provider: this.#name,
        cause: signal.reason,
      })
    }
  }
}
