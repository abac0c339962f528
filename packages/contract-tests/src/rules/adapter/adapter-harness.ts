import type { AgentAdapter } from '@agentx/core'
import type { DecodedRequest, WireDialect } from '../../dialects/wire-dialect.js'
import type { Scenario } from '../../fake-provider/scenario.js'

/** What `createAdapter` receives: where the fake provider listens and how to configure the adapter. */
export interface AdapterFactoryContext {
  /** The fake provider's base URL (origin + the dialect's `basePath`): pass it as the SDK's `baseURL`. */
  readonly baseURL: string
  /** A fresh fake API key for this rule. A-ERR-007 checks it never appears in an error. */
  readonly apiKey: string
  /**
   * The adapter MUST fail with `AdapterError` kind `timeout` when no byte arrives for this long
   * while streaming, and release the connection (A-ERR-008).
   */
  readonly idleTimeoutMs: number
}

/** One request a harness saw, decoded into core terms. */
export interface AdapterHarnessRequest {
  readonly decoded: DecodedRequest
  /** Whether the response was completely delivered. Default is unknown (`undefined`). */
  readonly finished?: boolean
}

/**
 * Drives an adapter with abstract {@link Scenario}s and records what it sent. `startFakeProvider`
 * is the harness of every HTTP adapter; an adapter that does not speak HTTP (an in-process model,
 * a WebSocket transport) passes its own through `createHarness`.
 */
export interface AdapterHarness {
  /** Queues answers: each model request takes the next scenario. */
  enqueue(...scenarios: Scenario[]): void
  /** Every model request received, in arrival order. */
  readonly requests: readonly AdapterHarnessRequest[]
  /** How many times the client gave up a response before it was complete (abort, `break`, timeout). */
  readonly disconnects: number
  /** Resolves once a disconnect happened that no earlier call consumed; rejects after `timeoutMs`. */
  waitForDisconnect(timeoutMs?: number): Promise<void>
  /** The base URL to hand to `createAdapter`. Default is `''`. */
  readonly baseURL?: string
  /** Open transport connections now, when the harness can tell (A-REQ-001). */
  readonly openConnections?: number
  /** The wire dialect, when there is one (lets rules compare error excerpts with the bad frame). */
  readonly dialect?: WireDialect
  /** Makes the adapter under test wired to this harness, for harnesses that build it themselves. */
  createAdapter?(context: AdapterFactoryContext): AgentAdapter | Promise<AgentAdapter>
  /** Releases the harness (called after each rule). */
  close(): Promise<void>
}
