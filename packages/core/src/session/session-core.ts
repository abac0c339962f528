import type { AgentAdapter } from '../contracts/agent-adapter.js'
import type { AgentPersister, SessionData } from '../contracts/agent-persister.js'
import type { AnyMessage, ContentBlock, MessageType, TokenUsage } from '../contracts/messages.js'
import type { SessionInit } from '../contracts/session-factory.js'
import type { SessionState } from '../contracts/session-state.js'
import { AdapterError, isAdapterError } from '../errors/adapter-error.js'
import { AgentError, isAgentError } from '../errors/agent-error.js'
import { SessionStateError } from '../errors/session-state-error.js'
import type { Tool } from '../tools/tool.js'
import type { EventStream } from '../util/event-stream.js'
import { emptyUsage } from '../util/token-usage.js'
import { uuidv7 } from '../util/uuid-v7.js'
import type { SendOptions } from './session.js'
import type { SessionEvent } from './session-events.js'
import { SessionHistory } from './session-history.js'
import { SessionLease } from './session-lease.js'
import { SessionListeners } from './session-listeners.js'
import { DEFAULT_PROFILE } from './session-profile.js'
import type { SessionRuntimeOptions } from './session-runtime-options.js'
import { assertTransition } from './session-state.js'
import type { SendInput } from './validate-input.js'
import { WriteQueue } from './write-queue.js'
import { thrownText } from '../util/thrown-text.js'

/** One running send: its input, its signal, where its events go and what it persisted. */
export interface SendRun {
  input: SendInput | { kind: 'retry' } | { kind: 'compact' }
  options: SendOptions
  controller: AbortController
  sink: EventStream<SessionEvent> | undefined
  emit(event: SessionEvent): void
  produced: AnyMessage[]
  /** An automatic compaction failed in this send: no other is tried until the next send (compaction.ts). */
  compactionFailed?: boolean
  /**
   * The send's outcome is settled and only its last events remain (the final `state`, `done`,
   * `error`): the session takes a new send from their listeners.
   */
  settled?: boolean
  /**
   * A model request of this send failed (not aborted) and its partial reply is being shown: a
   * `stream()` consumer that leaves on those last events does not turn the failure into an abort.
   */
  failing?: boolean
}

/**
 * The state of one session and its write path, shared by the public `BaseSession` and the steps
 * of the send loop (`send-loop.ts`): metadata and usage, the history, the write queue, the lease,
 * the listeners, state transitions and error normalisation. Internal: not exported from the package.
 */
export class SessionCore {
  readonly id: string
  readonly adapter: AgentAdapter
  readonly persister: AgentPersister | undefined
  readonly options: SessionRuntimeOptions
  readonly history: SessionHistory
  readonly queue: WriteQueue | undefined
  readonly lease: SessionLease | undefined
  readonly isClosed: () => boolean
  /** Opens a session object through the agent (its cache), for `fork()`. */
  readonly openSession: SessionInit['openSession']
  /** {@link SessionCore.resumeIssuer} looked at the stored messages already. */
  #issuerDerived = false
  readonly listeners: SessionListeners
  data: SessionData
  usage: TokenUsage
  /**
   * The adapter that issued the provider session id: only it gets it back as `resume`. Known in
   * memory once an id arrives; for a session loaded from the store it is derived from the stored
   * messages (see {@link SessionCore.resumeIssuer}).
   */
  resumeAdapter: AgentAdapter | undefined
  run: SendRun | undefined
  running: Promise<unknown> | undefined
  /**
   * The last send failed after a complete reply, because that reply was not the structured output
   * asked for (`OUTPUT_INVALID`): `retry()` asks the model again although a reply follows the
   * user message. Known in this process only.
   */
  retryAnswered = false
  /**
   * The options of the last send that failed or was aborted, in this process: `retry()` repeats
   * them (its own options win), so a retried structured-output send asks for the output again.
   */
  failedOptions: SendOptions | undefined
  /**
   * The tools passed to the send (`send({ tools })`) that left the session waiting for input, in
   * this process: `getPending()` and the send that answers know them without being given them
   * again. Tools are code, not data: after a restart only the agent's and the session's are known.
   */
  pausedTools: readonly Tool[] | undefined
  /**
   * The user message of a `sync` send that failed on a write the store may have committed all the
   * same (its answer lost): the next send reads it back before writing anything (see `settleUnsure`).
   */
  unsure: AnyMessage | undefined
  /** The stored record showed another process's activity: its messages are read before a page is served. */
  messagesBehind = false
  /** The session was deleted while a send ran: that send rejects with `SessionStateError` (`deleted`). */
  deletedWhileRunning = false

  constructor(init: SessionInit) {
    const { data, adapter, options, persister } = init
    this.id = data.id
    this.adapter = adapter
    this.options = options
    this.persister = persister
    this.isClosed = init.isClosed ?? (() => false)
    this.openSession = init.openSession
    this.data = { ...data }
    this.usage = { ...(data.tokenUsage ?? emptyUsage()) }
    this.history = new SessionHistory(persister, data.id, init.messages)
    this.listeners = new SessionListeners(data.id, options.logger)
    if (persister && options.owner !== undefined && SessionLease.isSupportedBy(persister)) {
      this.lease = new SessionLease({
        persister,
        sessionId: data.id,
        owner: options.owner,
        ...(options.leaseTtlMs === undefined ? {} : { ttlMs: options.leaseTtlMs }),
        ...(options.logger === undefined ? {} : { logger: options.logger }),
      })
    }
    if (persister) {
      this.queue = new WriteQueue(persister, data.id, {
        ...options.writeRetry,
        onError: (error) => {
          options.logger?.error('agentx: a write failed', { sessionId: data.id, code: error.code })
          this.emit({ type: 'persist-error', error })
        },
        onGone: () => this.lostFromStore(),
      })
    }
  }

  /** A send (or compaction) runs and has not settled yet: a new one is refused. */
  get busy(): boolean {
    return this.run !== undefined && this.run.settled !== true
  }

  get model(): string {
    return this.data.model ?? this.options.model
  }

  get systemPrompt(): string | undefined {
    return this.data.systemPrompt ?? this.options.systemPrompt
  }

  /**
   * The adapter to give the provider session id back to. Known in memory once an id arrives. For a
   * session loaded from the store (which adapter issued the stored id is not stored) it is derived
   * once, on first use, from the stored messages: the adapter of the profile that wrote the last
   * complete agent message (its `agentName`) — a stateful provider issues an id with every
   * response, so the last one to answer is the issuer whenever the issuer can tell. Kept from then
   * on, so another profile answering in this process does not move it; another adapter replays the
   * history instead of resuming, which costs tokens but is never wrong.
   */
  resumeIssuer(): AgentAdapter | undefined {
    if (this.resumeAdapter !== undefined || this.#issuerDerived) return this.resumeAdapter
    this.#issuerDerived = true
    const profiles = this.options.profiles
    let issuer = this.adapter
    if (profiles !== undefined) {
      const messages = this.history.messages
      for (let i = messages.length - 1; i >= 0; i--) {
        const message = messages[i]!
        if (message.type !== 'agent' || message.incomplete) continue
        issuer = profiles.get(message.agentName ?? DEFAULT_PROFILE)?.adapter ?? this.adapter
        break
      }
    }
    this.resumeAdapter = issuer
    return issuer
  }

  /** Forgets which adapter issued the provider session id (the id changed, or was dropped). */
  forgetResumeIssuer(): void {
    this.resumeAdapter = undefined
    this.#issuerDerived = false
  }

  /** A copy of the session's metadata as it is (or will be) stored. */
  toSessionData(): SessionData {
    return structuredClone({ ...this.data, tokenUsage: this.usage })
  }

  /** Queues the session's metadata. */
  saveSession(): Promise<void> | undefined {
    return this.queue?.saveSession(this.toSessionData())
  }

  /**
   * Adds a message to the history (frozen), queues its write and shows it. Await the result in
   * `sync` durability (through {@link SessionCore.write}): there the message is shown once durable.
   */
  append(message: AnyMessage, run: SendRun): Promise<void> | undefined {
    const frozen = this.history.append(message)
    run.produced.push(frozen)
    return this.show(frozen, this.queue?.saveMessage(frozen), run.emit)
  }

  /**
   * Shows a queued message (DESIGN §3): at once in `async` durability, where a `message` event
   * means the ordered write queue accepted it; in `sync`, only once its write is durable (the
   * returned promise, which rejects without showing it when the write failed).
   */
  show(
    message: AnyMessage,
    saved: Promise<void> | undefined,
    emit: (event: SessionEvent) => void,
  ): Promise<void> | undefined {
    if (this.options.durability === 'sync' && saved !== undefined) {
      // Held: while the send waits for this write, a retry keeps the process alive (WriteQueue.hold).
      const durable = this.queue ? this.queue.hold(saved) : saved
      return durable.then(() => emit({ type: 'message', message }))
    }
    emit({ type: 'message', message })
    return saved
  }

  /** In `sync` durability, waits for the write (and fails the send if it is not durable). */
  async write(saved: Promise<void> | undefined): Promise<void> {
    if (this.options.durability === 'sync') await this.durable(saved)
  }

  /**
   * Waits until a queued write is durable, whatever the durability (an operation that promises to
   * resolve once stored). Held: while it waits, the queue's retry timer keeps the process alive.
   */
  async durable(saved: Promise<void> | undefined): Promise<void> {
    if (saved) await (this.queue ? this.queue.hold(saved) : saved)
  }

  newMessage(type: MessageType, content: string | ContentBlock[]): AnyMessage {
    return {
      id: uuidv7(),
      sessionId: this.id,
      seq: this.history.nextSeq(),
      type,
      content,
      timestamp: new Date().toISOString(),
    }
  }

  setState(next: SessionState, emit: (event: SessionEvent) => void = (event) => this.emit(event)): void {
    const previous = this.data.state
    if (previous === next) return
    assertTransition(previous, next)
    this.data.state = next
    emit({ type: 'state', state: next, previous })
  }

  /**
   * A write found the session gone from the store (another process or the application deleted
   * it there): a running send is stopped, and the session becomes `deleted` with nothing more
   * written, instead of its record being written back as an empty session.
   */
  lostFromStore(): void {
    if (this.data.state === 'deleted') return
    const run = this.run
    if (run !== undefined && !run.settled) {
      this.deletedWhileRunning = true
      run.controller.abort()
    }
    void this.markDeleted(run?.emit)
  }

  /**
   * The store no longer holds this session (deleted here, by a parent's cascade, or by another
   * process): `deleted` at once — the agent lets the object go on its `state` event — its history
   * and listeners dropped, and nothing it still had queued is written, so it can never come back
   * as an orphan row. Resolves once a write in flight has settled.
   */
  markDeleted(emit?: (event: SessionEvent) => void): Promise<void> {
    if (this.data.state === 'deleted') return Promise.resolve()
    // A lease claimed to delete it (or by a send) went with the record: stop renewing it.
    this.lease?.abandon()
    const discarded = this.queue?.discard()
    this.setState('deleted', emit)
    this.history.clear()
    this.listeners.clear()
    return discarded ?? Promise.resolve()
  }

  emit(event: SessionEvent): void {
    this.listeners.emit(event)
  }

  /** Rejects every call once the agent is closed or the session deleted. */
  assertUsable(): void {
    if (this.isClosed()) {
      throw new AgentError('The agent of this session is closed.', 'AGENT_CLOSED')
    }
    if (this.data.state === 'deleted') {
      throw new SessionStateError(`Session ${this.id} is deleted.`, { state: 'deleted' })
    }
  }

  abort(): void {
    this.run?.controller.abort(
      new AdapterError(this.#abortedText(), { kind: 'aborted', provider: this.adapter.getName() }),
    )
  }

  /** What an abort of the running work says: a `compact()` is not a send. */
  #abortedText(): string {
    return this.run?.input.kind === 'compact' ? 'The compaction was aborted.' : 'The send was aborted.'
  }

  throwIfAborted(signal: AbortSignal): void {
    if (signal.aborted) throw this.abortedError(signal)
  }

  abortedError(signal: AbortSignal): AdapterError {
    const reason = signal.reason
    if (isAdapterError(reason) && reason.kind === 'aborted') return reason
    return new AdapterError(this.#abortedText(), {
      kind: 'aborted',
      provider: this.adapter.getName(),
      cause: reason,
    })
  }

  /** What a send fails with: the abort when aborted, an AgentError as it is, anything else as an adapter error. */
  toError(caught: unknown, signal: AbortSignal): AgentError {
    if (signal.aborted) return this.abortedError(signal)
    if (isAgentError(caught)) return caught
    return new AdapterError(thrownText(caught), {
      kind: 'unknown',
      provider: this.adapter.getName(),
      cause: caught,
      retryable: false,
    })
  }

  /** The end of a send with a lease: its writes become durable, then the lease is released. */
  async endLease(run: SendRun): Promise<void> {
    const lease = this.lease
    if (!lease?.isHeld) return
    try {
      await this.queue?.flush({ report: false })
    } catch {
      // Not durable yet: the lease stays held (renewed) while the queue retries in the background,
      // so no other process writes over a gap, and goes once the writes have landed.
      void this.queue?.whenIdle().then(() => this.releaseLeaseIfIdle())
      return
    }
    // A send started from this one's last events holds the lease now and releases it at its end.
    if (this.run !== run) return
    await lease.release()
  }

  /** Releases the lease when no send runs and nothing is left to write (the agent closes, an outage ended). */
  async releaseLeaseIfIdle(): Promise<void> {
    if (this.lease?.isHeld !== true || this.run !== undefined || this.queue?.idle === false) return
    await this.lease.release()
  }
}

/** Whether an error is the abort of a send. */
export function isAbort(error: unknown): boolean {
  return isAdapterError(error) && error.kind === 'aborted'
}
