/**
 * Attribute, span and metric names of the OpenTelemetry GenAI semantic conventions (development
 * status, the version that has `gen_ai.provider.name`), plus the `agentx.*` names this package adds
 * for what the conventions do not cover (retries, handoffs, sub-agents, compactions).
 */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheWriteTokens: 'gen_ai.usage.cache_creation.input_tokens',
  reasoningTokens: 'gen_ai.usage.reasoning.output_tokens',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolArguments: 'gen_ai.tool.call.arguments',
  toolResult: 'gen_ai.tool.call.result',
  tokenType: 'gen_ai.token.type',
  errorType: 'error.type',
} as const

/** Values of `gen_ai.operation.name`. */
export const OPERATION = {
  invokeAgent: 'invoke_agent',
  chat: 'chat',
  executeTool: 'execute_tool',
} as const

/** Metric names. */
export const METRIC = {
  tokenUsage: 'gen_ai.client.token.usage',
  operationDuration: 'gen_ai.client.operation.duration',
} as const

/** Bucket boundaries the conventions advise for `gen_ai.client.token.usage`. */
export const TOKEN_BUCKETS: number[] = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
]
/** Bucket boundaries the conventions advise for `gen_ai.client.operation.duration` (seconds). */
export const DURATION_BUCKETS: number[] = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
]

/** Span event names of this package (the conventions define none for these). */
export const EVENT = {
  retry: 'agentx.retry',
  retriesExhausted: 'agentx.retries_exhausted',
  handoff: 'agentx.handoff',
  subagent: 'agentx.subagent',
  compaction: 'agentx.compaction',
  persistError: 'agentx.persist_error',
  inputRequired: 'agentx.input_required',
} as const

/** `error.type` of a tool call whose result has `isError: true`. */
export const TOOL_ERROR = 'tool_error'
/** `error.type` of an aborted send or model request (the code of core's aborted `AdapterError`). */
export const ABORTED = 'ADAPTER_ABORTED'
/** `error.type` when nothing better is known (the conventions' fallback). */
export const OTHER_ERROR = '_OTHER'

/**
 * AgentX adapter names (`getName()`) that have a well-known `gen_ai.provider.name` value, which the
 * conventions say MUST then be used. Other names pass through unchanged.
 */
const WELL_KNOWN_PROVIDERS: Readonly<Record<string, string>> = {
  claude: 'anthropic',
  anthropic: 'anthropic',
  openai: 'openai',
  gemini: 'gcp.gemini',
}

/** The `gen_ai.provider.name` of an adapter name. */
export function providerNameOf(adapterName: string): string {
  return WELL_KNOWN_PROVIDERS[adapterName] ?? adapterName
}

/**
 * The `error.type` of a failure: an AgentX error's stable `code` (e.g. `ADAPTER_RATE_LIMIT`,
 * `PERSISTENCE_UNAVAILABLE`), else the error's `name`, else `_OTHER` — always low-cardinality.
 */
export function errorTypeOf(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const { code, name } = error as { code?: unknown; name?: unknown }
    if (typeof code === 'string' && code !== '') return code
    if (typeof name === 'string' && name !== '' && name !== 'Error') return name
  }
  return OTHER_ERROR
}

/** The message of a failure, for the span status. */
export function errorMessageOf(error: unknown): string {
  if (error instanceof Error) return error.message
  if (typeof error === 'object' && error !== null) {
    const { message } = error as { message?: unknown }
    if (typeof message === 'string') return message
  }
  return String(error)
}
