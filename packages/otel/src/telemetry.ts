import type { Histogram, Tracer } from '@opentelemetry/api'

/** What every session trace of one `instrumentAgent` call shares. */
export interface Telemetry {
  readonly tracer: Tracer
  /** `gen_ai.client.token.usage`. */
  readonly tokenUsage: Histogram
  /** `gen_ai.client.operation.duration`. */
  readonly operationDuration: Histogram
  readonly recordContent: boolean
  /** `gen_ai.agent.name` given in the options, if any. */
  readonly agentName: string | undefined
  /** `gen_ai.provider.name` given in the options: it wins over what events say. */
  readonly configuredProvider: string | undefined
  /** The best known `gen_ai.provider.name` right now. */
  provider(): string
  /** Learns the provider from an adapter name seen in an event (e.g. an `AdapterError.provider`). */
  learnProvider(adapterName: unknown): void
}
