import { ValidationError } from '../errors/validation-error.js'
import type { Logger } from '../util/logger.js'
import type { SessionEvent, SessionListener } from './session-events.js'
import { thrownText } from '../util/thrown-text.js'

type StateEvent = Extract<SessionEvent, { type: 'state' }>

/**
 * The listeners of one session. The lists are replaced, never mutated, on (un)subscribe: emitting
 * walks a plain array (no iterator per event), and a listener added or removed while an event is
 * being handed out takes effect from the next event. A listener that throws is logged and the
 * others still hear the event.
 */
export class SessionListeners {
  #listeners: readonly SessionListener[] = []
  /** Hear `state` events only, before the listeners: the agent's bookkeeping costs no call per streamed event. */
  #stateWatchers: readonly SessionListener[] = []
  readonly #sessionId: string
  readonly #logger: Logger | undefined

  constructor(sessionId: string, logger: Logger | undefined) {
    this.#sessionId = sessionId
    this.#logger = logger
  }

  /** Adds a listener (once, however often it is given); returns its removal. */
  subscribe(listener: SessionListener): () => void {
    if (typeof listener !== 'function') throw new ValidationError('subscribe() takes a listener function.')
    if (!this.#listeners.includes(listener)) this.#listeners = [...this.#listeners, listener]
    return () => {
      this.#listeners = this.#listeners.filter((other) => other !== listener)
    }
  }

  /** Adds a watcher of `state` events (the agent's session cache); returns its removal. */
  watchState(watcher: (event: StateEvent) => void): () => void {
    const listener = watcher as SessionListener
    this.#stateWatchers = [...this.#stateWatchers, listener]
    return () => {
      this.#stateWatchers = this.#stateWatchers.filter((other) => other !== listener)
    }
  }

  clear(): void {
    this.#listeners = []
    this.#stateWatchers = []
  }

  emit(event: SessionEvent): void {
    if (event.type === 'state') this.#call(this.#stateWatchers, event)
    this.#call(this.#listeners, event)
  }

  #call(listeners: readonly SessionListener[], event: SessionEvent): void {
    for (let i = 0; i < listeners.length; i++) {
      const listener = listeners[i] as SessionListener
      try {
        listener(event)
      } catch (error) {
        this.#logger?.warn('agentx: a session listener threw', {
          sessionId: this.#sessionId,
          error: thrownText(error),
        })
      }
    }
  }
}
