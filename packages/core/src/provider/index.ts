// @agentx/core/provider: the shared toolkit of streaming adapters (first-party and third-party).
// See docs/decisions/0003-shared-provider-toolkit.md for why it lives here.

export {
  blocksOf,
  imageUrlOf,
  parseDataUrl,
  parseToolInput,
  textOf,
  toolInputObject,
} from './content-blocks.js'
export type { DataUrl, ParsedToolInput } from './content-blocks.js'
export { IdleWatchdog } from './idle-watchdog.js'
export { malformedFrameError, parseJsonFrame, ProviderProtocolError } from './malformed-frame.js'
export { mapHttpError, mapStreamError } from './map-http-error.js'
export type { HeadersLike, HttpErrorDetails, ProviderErrorDetails } from './map-http-error.js'
export { describeConnectionFailure, mapTransportError } from './map-transport-error.js'
export type { ConnectionFailure } from './map-transport-error.js'
export type { ProviderIdentity } from './provider-identity.js'
export type { ToolNameRule } from './provider-options.js'
export {
  checkSendOptions,
  checkToolNames,
  conflictingOutputOption,
  DEFAULT_IDLE_TIMEOUT_MS,
  invalidOption,
  readBaseUrl,
  readEnv,
  readIdleTimeoutMs,
  readPositiveInteger,
  readProviderOptions,
  readStringOption,
  unsupportedOption,
} from './provider-options.js'
export { REDACTED, redactAndCut, redactSecrets, sanitizeCause } from './redact-secrets.js'
export { ServerSentEventAdapter } from './server-sent-event-adapter.js'
export { ServerSentEventParser, type ServerSentEventParserOptions } from './server-sent-event-parser.js'
export type { ServerSentEventHandler } from './server-sent-event-parser.js'
export { abortedError, idleTimeoutError, incompleteStreamError, notAStreamError } from './stream-errors.js'
export { DRAIN_GRACE_MS, streamServerSentEvents } from './stream-server-sent-events.js'
export type {
  OpenedEventStream,
  OpenEventStream,
  ServerSentEventMapper,
  ServerSentEventTransport,
} from './stream-server-sent-events.js'
// Waiting on a promise that an abort must not hold up (the promise itself goes on).
export { raceAbort } from '../util/abort.js'
