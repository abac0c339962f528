import type { ContentBlock, StopReason } from '@agentx/core'
import type {
  ScenarioBlock,
  ScenarioError,
  ScenarioResponse,
  ScenarioUsage,
} from '../fake-provider/scenario.js'
import { decodeJsonSchemaFormat, nested } from './decode-output.js'
import { header, interleave, type Json, pieces, randomId } from './dialect-helpers.js'
import type { DecodedRequest, EncodedHttpError, ReceivedRequest, WireDialect } from './wire-dialect.js'

/** `event: <type>` plus one `data:` line: Anthropic's SDK drops frames without the `event:` line. */
function frame(type: string, data: Json): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
}

const STOP_REASONS: Record<StopReason, string> = {
  end_turn: 'end_turn',
  max_tokens: 'max_tokens',
  tool_use: 'tool_use',
  content_filter: 'refusal',
  other: 'pause_turn',
  aborted: 'end_turn',
  error: 'end_turn',
}

const ERRORS: Record<ScenarioError['kind'], { status: number; type: string; message: string }> = {
  rate_limit: {
    status: 429,
    type: 'rate_limit_error',
    message: 'Number of request tokens has exceeded your per-minute rate limit',
  },
  overloaded: { status: 529, type: 'overloaded_error', message: 'Overloaded' },
  authentication: { status: 401, type: 'authentication_error', message: 'invalid x-api-key' },
  permission: {
    status: 403,
    type: 'permission_error',
    message: 'Your API key does not have permission to use the specified resource.',
  },
  invalid_request: {
    status: 400,
    type: 'invalid_request_error',
    message: 'messages: roles must alternate between "user" and "assistant"',
  },
  not_found: { status: 404, type: 'not_found_error', message: 'model: claude-unknown' },
  context_length: {
    status: 400,
    type: 'invalid_request_error',
    message: 'prompt is too long: 215000 tokens > 200000 maximum',
  },
  server: { status: 500, type: 'api_error', message: 'Internal server error' },
  unknown_resume: { status: 400, type: 'invalid_request_error', message: 'Unknown conversation id' },
}

function errorType(kind: ScenarioError['kind'], status: number): string {
  const known = ERRORS[kind].type
  if (status === ERRORS[kind].status) return known
  if (status === 529 || status === 503) return 'overloaded_error'
  if (status === 504) return 'timeout_error'
  if (status === 409) return 'conflict_error'
  return known
}

/** Anthropic's usage fields: `input_tokens` excludes the cached parts, which are reported apart. */
function wireUsage(usage: ScenarioUsage): { input: Json; output: Json } {
  const cacheRead = usage.cacheReadTokens ?? 0
  const cacheWrite = usage.cacheWriteTokens ?? 0
  const input: Json = {
    input_tokens: usage.inputTokens - cacheRead - cacheWrite,
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
  }
  const output: Json = { output_tokens: usage.outputTokens }
  if (usage.reasoningTokens !== undefined)
    output.output_tokens_details = { thinking_tokens: usage.reasoningTokens }
  return { input, output }
}

/** The frames of one content block: start, deltas, stop. */
function blockFrames(
  block: ScenarioBlock,
  index: number,
  deltaSize: number | undefined,
): { start: string; deltas: string[]; stop: string } {
  const stop = frame('content_block_stop', { index })
  const delta = (payload: Json): string => frame('content_block_delta', { index, delta: payload })
  if (block.type === 'text') {
    return {
      start: frame('content_block_start', { index, content_block: { type: 'text', text: '' } }),
      deltas: pieces(block.text, deltaSize).map((text) => delta({ type: 'text_delta', text })),
      stop,
    }
  }
  if (block.type === 'thinking') {
    const deltas = pieces(block.text, deltaSize).map((thinking) =>
      delta({ type: 'thinking_delta', thinking }),
    )
    if (block.signature !== undefined)
      deltas.push(delta({ type: 'signature_delta', signature: block.signature }))
    return {
      start: frame('content_block_start', {
        index,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      }),
      deltas,
      stop,
    }
  }
  const argumentsText = block.rawArguments ?? JSON.stringify(block.input ?? {})
  const parts = argumentsText === '' ? [] : pieces(argumentsText, deltaSize)
  return {
    start: frame('content_block_start', {
      index,
      content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
    }),
    deltas: [
      delta({ type: 'input_json_delta', partial_json: '' }),
      ...parts.map((partial_json) => delta({ type: 'input_json_delta', partial_json })),
    ],
    stop,
  }
}

function encodeResponse(response: ScenarioResponse, request: DecodedRequest): string[] {
  const usage = response.usage ? wireUsage(response.usage) : undefined
  const message: Json = {
    id: response.responseId ?? randomId('msg_'),
    type: 'message',
    role: 'assistant',
    content: [],
    model: request.model ?? 'claude-fake',
    stop_reason: null,
    stop_sequence: null,
  }
  if (usage) message.usage = { ...usage.input, output_tokens: 1 }
  const frames = [frame('message_start', { message })]
  frames.push(frame('ping', {}))
  const blocks = response.blocks.map((block, index) => blockFrames(block, index, response.deltaSize))
  const isTool = (index: number): boolean => response.blocks[index]?.type === 'tool-call'
  let index = 0
  while (index < blocks.length) {
    const current = blocks[index] as (typeof blocks)[number]
    if (response.interleaveToolCalls && isTool(index) && isTool(index + 1)) {
      // A run of tool calls: open them all, interleave their argument fragments, close them all.
      let end = index
      while (end < blocks.length && isTool(end)) end += 1
      const run = blocks.slice(index, end)
      frames.push(
        ...run.map((block) => block.start),
        ...interleave(run.map((block) => block.deltas)),
        ...run.map((block) => block.stop),
      )
      index = end
      continue
    }
    frames.push(current.start, ...current.deltas, current.stop)
    index += 1
  }
  const delta: Json = {
    delta: { stop_reason: response.rawStopReason ?? STOP_REASONS[response.stopReason], stop_sequence: null },
  }
  if (usage) delta.usage = response.usageInTrailingFrame ? { ...usage.input, ...usage.output } : usage.output
  frames.push(frame('message_delta', delta), frame('message_stop', {}))
  return frames
}

function toBlocks(content: unknown): ContentBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  if (!Array.isArray(content)) return []
  return content.flatMap((raw): ContentBlock[] => {
    const block = raw as Json
    switch (block.type) {
      case 'text':
        return [{ type: 'text', text: String(block.text) }]
      case 'image': {
        const source = (block.source ?? {}) as Json
        if (source.type === 'url')
          return [{ type: 'image', mediaType: String(source.media_type ?? ''), url: String(source.url) }]
        return [{ type: 'image', mediaType: String(source.media_type), data: String(source.data) }]
      }
      case 'thinking':
        return [
          {
            type: 'thinking',
            text: String(block.thinking),
            ...(typeof block.signature === 'string' ? { signature: block.signature } : {}),
          },
        ]
      case 'tool_use':
        return [{ type: 'tool_use', id: String(block.id), name: String(block.name), input: block.input }]
      case 'tool_result': {
        const result: ContentBlock = {
          type: 'tool_result',
          toolUseId: String(block.tool_use_id),
          content: typeof block.content === 'string' ? block.content : toBlocks(block.content ?? []),
        }
        if (typeof block.is_error === 'boolean') result.isError = block.is_error
        return [result]
      }
      default:
        return []
    }
  })
}

function decodeRequest(request: ReceivedRequest): DecodedRequest {
  const body = JSON.parse(request.body || '{}') as Json
  const bearer = /^Bearer\s+(.+)$/i.exec(header(request, 'authorization') ?? '')?.[1]
  const system = body.system
  const systemPrompt =
    typeof system === 'string'
      ? system
      : Array.isArray(system)
        ? system.map((block) => String((block as Json).text ?? '')).join('\n')
        : undefined
  const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : []
  // The Messages API answers such a request with HTTP 400 invalid_request_error.
  const toolBlocks = messages.some(
    (message) =>
      Array.isArray(message.content) &&
      message.content.some((block) => ['tool_use', 'tool_result'].includes((block as Json).type as string)),
  )
  if (toolBlocks && !(Array.isArray(body.tools) && body.tools.length > 0))
    throw new Error('requests which include `tool_use` or `tool_result` blocks must define tools.')
  return {
    model: typeof body.model === 'string' ? body.model : undefined,
    stream: body.stream === true,
    apiKey: header(request, 'x-api-key') ?? bearer,
    systemPrompt,
    messages: messages.map((message) => ({
      role: message.role === 'assistant' ? 'assistant' : 'user',
      content: toBlocks(message.content),
    })),
    tools: Array.isArray(body.tools) ? (body.tools as Json[]).map((tool) => String(tool.name)) : [],
    resume: undefined,
    // `output_config.format` on the Messages API; `output_format` is the beta field it replaced.
    output:
      decodeJsonSchemaFormat(nested(body, 'output_config', 'format'), { tagged: true }) ??
      decodeJsonSchemaFormat(body.output_format, { tagged: true }),
  }
}

function encodeHttpError(error: ScenarioError): EncodedHttpError {
  const known = ERRORS[error.kind]
  const status = error.status ?? known.status
  const requestId = randomId('req_')
  return {
    status,
    headers: { 'content-type': 'application/json', 'request-id': requestId, ...error.headers },
    body: JSON.stringify({
      type: 'error',
      error: { type: errorType(error.kind, status), message: error.message ?? known.message },
      request_id: requestId,
    }),
  }
}

/**
 * The Anthropic Messages API (`POST /v1/messages`) as `@anthropic-ai/sdk` speaks it: SSE frames
 * with `event:` lines (`message_start`, `content_block_start`, `*_delta`, `content_block_stop`,
 * `message_delta`, `message_stop`, `ping`, `error`), JSON error bodies with a `request-id`
 * header. Accepts `authorization: Bearer` (SDK 1.x) and `x-api-key` (0.x) auth.
 *
 * Pass it to `startFakeProvider({ dialect: anthropicMessagesDialect })`; the SDK's `baseURL` is
 * the server origin (the SDK adds `/v1`).
 */
export const anthropicMessagesDialect: WireDialect = {
  name: 'anthropic-messages',
  basePath: '',
  usageParts: ['cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens'],
  matches(request) {
    return request.method === 'POST' && request.url.split('?')[0] === '/v1/messages'
  },
  streamHeaders() {
    return {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'request-id': randomId('req_'),
    }
  },
  encodeResponse,
  encodeStreamError(error) {
    const known = ERRORS[error.kind]
    return frame('error', {
      error: {
        type: errorType(error.kind, error.status ?? known.status),
        message: error.message ?? known.message,
      },
    })
  },
  encodeMalformedFrame() {
    return 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","te\n\n'
  },
  encodeUnknownFrame() {
    return frame('agentx_future_event', { detail: { note: 'clients must ignore unknown event types' } })
  },
  encodeHttpError,
  decodeRequest,
}
