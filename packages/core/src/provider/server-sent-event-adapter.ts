import type { AdapterMessage, AdapterStreamOptions, AgentAdapter } from '../contracts/agent-adapter.js'
import type { ContentBlock } from '../contracts/messages.js'
import {
  type OpenedEventStream,
  type ServerSentEventTransport,
  streamServerSentEvents,
} from './stream-server-sent-events.js'

/**
 * The skeleton of an {@link AgentAdapter} whose provider streams server-sent events: `getName()`
 * and `stream()` come from here, a subclass writes only its constructor (options → transport) and
 * {@link ServerSentEventAdapter.openStream} (request → raw response and vendor mapper).
 *
 * `stream()` is {@link streamServerSentEvents}, so every subclass aborts, times out, releases
 * connections and fails alike. The Claude, OpenAI and Gemini adapters are subclasses; a
 * third-party adapter may be one too, or call `streamServerSentEvents` from its own class.
 *
 * @example
 * class AcmeAdapter extends ServerSentEventAdapter {
 *   constructor(options: { apiKey: string }) {
 *     const provider = { name: 'acme', label: 'Acme', secrets: [options.apiKey] }
 *     super({ provider, idleTimeoutMs: 60_000, mapError: (error) => mapTransportError(provider, error) })
 *   }
 *   protected openStream(prompt, options, signal) {
 *     return fetch(URL, { method: 'POST', body: toAcmeBody(prompt, options), signal })
 *       .then((response) => ({ response, mapper: new AcmeStreamMapper() }))
 *   }
 * }
 */
export abstract class ServerSentEventAdapter implements AgentAdapter {
  readonly specificationVersion = 'v1' as const
  readonly #transport: ServerSentEventTransport

  /** `transport`: the adapter's identity, idle timeout and vendor error mapping. */
  constructor(transport: ServerSentEventTransport) {
    this.#transport = transport
  }

  /** The provider name (`ProviderIdentity.name`), also `provider` of every error the adapter throws. */
  getName(): string {
    return this.#transport.provider.name
  }

  /**
   * Streams one model response for `prompt` after `options.history`: the one async generator of
   * {@link streamServerSentEvents} around {@link ServerSentEventAdapter.openStream}.
   *
   * @throws {AdapterError} for every failure of the request: `aborted` when `options.signal`
   *   aborts, `timeout` after the idle timeout, `network` for a stream cut before its end, and the
   *   kinds of the vendor's error mapping.
   * @throws {ValidationError} for options or content the provider cannot take, before any request.
   */
  stream(
    prompt: string | ContentBlock[],
    options: AdapterStreamOptions,
  ): AsyncGenerator<AdapterMessage, void, undefined> {
    return streamServerSentEvents(this.#transport, options.signal, (signal) =>
      this.openStream(prompt, options, signal),
    )
  }

  /**
   * Validates the options, builds and sends one request with `signal`, and resolves to the raw
   * streaming response and a fresh vendor mapper. Called by `stream()` once per request, after
   * the already-aborted check; what it throws is mapped by the transport's `mapError` (an
   * `AgentError` passes through).
   */
  protected abstract openStream(
    prompt: string | ContentBlock[],
    options: AdapterStreamOptions,
    signal: AbortSignal,
  ): Promise<OpenedEventStream>
}
