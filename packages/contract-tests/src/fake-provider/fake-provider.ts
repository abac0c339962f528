import type { DecodedRequest, ReceivedRequest, WireDialect } from '../dialects/wire-dialect.js'
import type { Scenario } from './scenario.js'

/** One model request the {@link FakeProvider} answered, in arrival order. */
export interface FakeProviderRequest {
  /** The request as it arrived (method, url, lower-cased headers, body text). */
  readonly received: ReceivedRequest
  /** The request decoded by the dialect into core terms (history, tools, system prompt, resume). */
  readonly decoded: DecodedRequest
  /** The scenario that answered it; absent when none was queued (the server answered 500). */
  readonly scenario?: Scenario
  /** Whether the server finished writing its response (`false` while streaming, stalled or cut by the client). */
  readonly finished: boolean
  /** Whether the client closed the connection before the server finished the response. */
  readonly disconnected: boolean
}

/**
 * A loopback `node:http` server that plays {@link Scenario}s in one provider's wire dialect, made
 * by `startFakeProvider({ dialect })`.
 *
 * Point the adapter (or the provider SDK) at {@link FakeProvider.baseURL}, queue what the model
 * answers with {@link FakeProvider.enqueue}, run the adapter, then check what the server received
 * ({@link FakeProvider.requests}) and whether the client let go of the connection
 * ({@link FakeProvider.disconnects}, {@link FakeProvider.waitForDisconnect}).
 *
 * @example
 * const fake = await startFakeProvider({ dialect: anthropicMessagesDialect })
 * fake.enqueue({ response: { blocks: [{ type: 'text', text: 'Hi' }], stopReason: 'end_turn' } })
 * const adapter = new ClaudeAdapter({ apiKey: 'test', baseURL: fake.baseURL })
 * // … stream, then:
 * expect(fake.requests[0]?.decoded.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }])
 * await fake.close()
 */
export interface FakeProvider {
  /** `http://127.0.0.1:PORT`. */
  readonly origin: string
  /** `origin` + the dialect's `basePath`: what to pass as the SDK's `baseURL`. */
  readonly baseURL: string
  /** The dialect the server speaks. */
  readonly dialect: WireDialect
  /** Queues answers: each model request takes the next scenario; with none left the server answers 500. */
  enqueue(...scenarios: Scenario[]): void
  /** Scenarios queued and not yet taken. */
  readonly pending: number
  /** Every model request received, in arrival order. */
  readonly requests: readonly FakeProviderRequest[]
  /** Requests that matched no route of the dialect (answered 404), for diagnosing a wrong `baseURL`. */
  readonly unmatched: readonly ReceivedRequest[]
  /** How many client connections closed before the server finished its response. */
  readonly disconnects: number
  /** How many TCP connections are open now (idle keep-alive connections included). */
  readonly openConnections: number
  /**
   * Resolves as soon as a client disconnect has happened that no earlier call consumed (one that
   * already happened counts), so `abort(); await fake.waitForDisconnect()` never races. Rejects
   * with an `Error` after `timeoutMs` (default 2000) without one.
   */
  waitForDisconnect(timeoutMs?: number): Promise<void>
  /** Forgets requests, queued scenarios and counters, and ends every response still open. */
  reset(): void
  /** Ends every open response and connection and stops listening. Idempotent. */
  close(): Promise<void>
}
