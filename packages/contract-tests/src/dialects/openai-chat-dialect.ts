import { randomBytes } from 'node:crypto'
import type { ContentBlock, StopReason } from '@agentx/core'
import type { ScenarioError, ScenarioResponse, ScenarioUsage } from '../fake-provider/scenario.js'
import { decodeJsonSchemaFormat, nested } from './decode-output.js'
import type { DecodedRequest, EncodedHttpError, ReceivedRequest, WireDialect } from './wire-dialect.js'

type Json = Record<string, unknown>

function randomId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString('base64url')}`
}

/** Splits text into pieces of at most `size` code points (never inside a surrogate pair). */
function pieces(text: string, size: number | undefined): string[] {
  if (size === undefined || size <= 0) return [text]
  const characters = Array.from(text)
  const out: string[] = []
  for (let i = 0; i < characters.length; i += size) out.push(characters.slice(i, i + size).join(''))
  return out.length > 0 ? out : ['']
}

/** Round-robin over the lists, so fragments of different tool calls interleave. */
function interleave<T>(lists: T[][]): T[] {
  const out: T[] = []
  const longest = Math.max(0, ...lists.map((list) => list.length))
  for (let i = 0; i < longest; i += 1) for (const list of lists) if (i < list.length) out.push(list[i] as T)
  return out
}

const FINISH_REASONS: Record<StopReason, string> = {
  end_turn: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  content_filter: 'content_filter',
  other: 'other',
  aborted: 'stop',
  error: 'stop',
}

const ERRORS: Record<
  ScenarioError['kind'],
  { status: number; type: string; code: string | null; message: string; param?: string }
> = {
  rate_limit: {
    status: 429,
    type: 'tokens',
    code: 'rate_limit_exceeded',
    message:
      'Rate limit reached for gpt-5.4-mini in organization org-fake on tokens per min (TPM): Limit 200000, Used 195869, Requested 4412. Please try again in 84ms.',
  },
  overloaded: {
    status: 503,
    type: 'server_error',
    code: null,
    message: 'The server is overloaded or not ready yet.',
  },
  authentication: {
    status: 401,
    type: 'invalid_request_error',
    code: 'invalid_api_key',
    message:
      'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.',
  },
  permission: {
    status: 403,
    type: 'invalid_request_error',
    code: 'unsupported_country_region_territory',
    message: 'Country, region, or territory not supported',
  },
  invalid_request: {
    status: 400,
    type: 'invalid_request_error',
    code: 'unsupported_parameter',
    param: 'max_tokens',
    message:
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
  },
  not_found: {
    status: 404,
    type: 'invalid_request_error',
    code: 'model_not_found',
    param: 'model',
    message: 'The model `gpt-unknown` does not exist or you do not have access to it.',
  },
  context_length: {
    status: 400,
    type: 'invalid_request_error',
    code: 'context_length_exceeded',
    param: 'messages',
    message:
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.",
  },
  server: {
    status: 500,
    type: 'server_error',
    code: null,
    message: 'The server had an error while processing your request. Sorry about that!',
  },
  unknown_resume: {
    status: 400,
    type: 'invalid_request_error',
    code: 'previous_response_not_found',
    param: 'previous_response_id',
    message: "Previous response with id 'resp_unknown' not found.",
  },
}

function errorBody(error: ScenarioError): Json {
  const known = ERRORS[error.kind]
  return {
    message: error.message ?? known.message,
    type: known.type,
    param: known.param ?? null,
    code: known.code,
  }
}

/** Chat usage; optional details only when the scenario has them (absent stays absent). */
function wireUsage(usage: ScenarioUsage): Json {
  const result: Json = {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
  }
  if (usage.cacheReadTokens !== undefined)
    result.prompt_tokens_details = { cached_tokens: usage.cacheReadTokens }
  if (usage.reasoningTokens !== undefined) {
    result.completion_tokens_details = { reasoning_tokens: usage.reasoningTokens }
  }
  return result
}

function encodeResponse(scenario: ScenarioResponse, request: DecodedRequest): string[] {
  const id = randomId('chatcmpl-')
  const created = Math.floor(Date.now() / 1000)
  const model = request.model ?? 'gpt-fake'
  const chunk = (choices: Json[], extra: Json = {}): string =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_agentx', choices, ...extra })}\n\n`
  const delta = (payload: Json, finish: string | null = null): string =>
    chunk([{ index: 0, delta: payload, logprobs: null, finish_reason: finish }])

  const frames = [delta({ role: 'assistant', content: '', refusal: null })]
  let toolIndex = 0
  let position = 0
  const blocks = scenario.blocks
  while (position < blocks.length) {
    const block = blocks[position]!
    if (block.type === 'text') {
      for (const text of pieces(block.text, scenario.deltaSize)) frames.push(delta({ content: text }))
      position += 1
      continue
    }
    if (block.type === 'thinking') {
      // What DeepSeek, vLLM and other compatible servers stream; OpenAI itself sends no reasoning text.
      for (const text of pieces(block.text, scenario.deltaSize))
        frames.push(delta({ reasoning_content: text }))
      position += 1
      continue
    }
    let end = position + 1
    if (scenario.interleaveToolCalls) while (blocks[end]?.type === 'tool-call') end += 1
    const run = blocks.slice(position, end).map((call) => {
      if (call.type !== 'tool-call') throw new Error('unreachable')
      const index = toolIndex++
      const argumentsText = call.rawArguments ?? JSON.stringify(call.input ?? {})
      const first = delta({
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      })
      const fragments = (argumentsText === '' ? [] : pieces(argumentsText, scenario.deltaSize)).map((text) =>
        delta({ tool_calls: [{ index, function: { arguments: text } }] }),
      )
      return { first, fragments }
    })
    frames.push(...run.map((call) => call.first), ...interleave(run.map((call) => call.fragments)))
    position = end
  }
  const finish = scenario.rawStopReason ?? FINISH_REASONS[scenario.stopReason]
  const usage = scenario.usage ? wireUsage(scenario.usage) : undefined
  if (usage && scenario.usageInTrailingFrame) {
    frames.push(delta({}, finish), chunk([], { usage }))
  } else {
    frames.push(
      chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: finish }], usage ? { usage } : {}),
    )
  }
  frames.push('data: [DONE]\n\n')
  return frames
}

function imageBlock(url: string): ContentBlock {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url)
  if (match) return { type: 'image', mediaType: match[1] as string, data: match[2] as string }
  return { type: 'image', mediaType: '', url }
}

function partsToBlocks(content: unknown): ContentBlock[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }]
  if (!Array.isArray(content)) return []
  return content.flatMap((raw): ContentBlock[] => {
    const part = raw as Json
    if (part.type === 'text') return [{ type: 'text', text: String(part.text ?? '') }]
    if (part.type === 'image_url') {
      const image = part.image_url as Json | string | undefined
      return [imageBlock(typeof image === 'string' ? image : String(image?.url ?? ''))]
    }
    return []
  })
}

function parseArguments(text: unknown): unknown {
  if (typeof text !== 'string' || text.trim() === '') return {}
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
  }
}

function header(request: ReceivedRequest, name: string): string | undefined {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}

function decodeRequest(request: ReceivedRequest): DecodedRequest {
  const body = JSON.parse(request.body || '{}') as Json
  const bearer = /^Bearer\s+(.+)$/i.exec(header(request, 'authorization') ?? '')?.[1]
  const system: string[] = []
  const messages: DecodedRequest['messages'] = []
  const push = (role: 'user' | 'assistant', blocks: ContentBlock[]): void => {
    if (blocks.length === 0) return
    const last = messages[messages.length - 1]
    if (last && last.role === role) last.content.push(...blocks)
    else messages.push({ role, content: blocks })
  }
  for (const message of Array.isArray(body.messages) ? (body.messages as Json[]) : []) {
    if (message.role === 'system' || message.role === 'developer') {
      system.push(
        partsToBlocks(message.content)
          .map((block) => (block.type === 'text' ? block.text : ''))
          .join(''),
      )
    } else if (message.role === 'assistant') {
      const blocks = partsToBlocks(message.content)
      const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as Json[]) : []
      for (const call of calls) {
        const fn = (call.function ?? {}) as Json
        blocks.push({
          type: 'tool_use',
          id: String(call.id),
          name: String(fn.name),
          input: parseArguments(fn.arguments),
        })
      }
      push('assistant', blocks)
    } else if (message.role === 'tool') {
      const content = message.content
      push('user', [
        {
          type: 'tool_result',
          toolUseId: String(message.tool_call_id),
          content: typeof content === 'string' ? content : partsToBlocks(content),
        },
      ])
    } else push('user', partsToBlocks(message.content))
  }
  const tools = Array.isArray(body.tools) ? (body.tools as Json[]) : []
  return {
    model: typeof body.model === 'string' ? body.model : undefined,
    stream: body.stream === true,
    apiKey: bearer,
    systemPrompt: system.length > 0 ? system.join('\n') : undefined,
    messages,
    tools: tools.map((tool) => String(((tool.function ?? {}) as Json).name)),
    resume: undefined,
    output:
      nested(body, 'response_format', 'type') === 'json_schema'
        ? decodeJsonSchemaFormat(nested(body, 'response_format', 'json_schema'), { tagged: false })
        : undefined,
  }
}

function encodeHttpError(error: ScenarioError): EncodedHttpError {
  const status = error.status ?? ERRORS[error.kind].status
  return {
    status,
    headers: { 'content-type': 'application/json', 'x-request-id': randomId('req_'), ...error.headers },
    body: JSON.stringify({ error: errorBody(error) }),
  }
}

/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`) as the `openai` SDK streams it, and as
 * every compatible server speaks it: data-only `data: {chunk}` frames, a first delta with
 * `role: "assistant"`, tool calls as fragments by `index` (the first with `id`, `type` and
 * `function.name`), a chunk with `finish_reason`, usage (on the finish chunk, or with
 * `usageInTrailingFrame` in a trailing `choices: []` chunk, as `stream_options.include_usage`
 * asks) and `data: [DONE]`. Thinking streams as `delta.reasoning_content`, as compatible
 * reasoning servers send it (no signature: the protocol has none). Errors are JSON
 * `{ error: { message, type, param, code } }`; a mid-stream error is a `data: {"error": …}` chunk.
 *
 * Pass it to `startFakeProvider({ dialect: openAIChatDialect })` and give the SDK
 * `baseURL: fake.baseURL` (origin + `/v1`).
 */
export const openAIChatDialect: WireDialect = {
  name: 'openai-chat',
  basePath: '/v1',
  usageParts: ['cacheReadTokens', 'reasoningTokens'],
  matches(request) {
    return request.method === 'POST' && request.url.split('?')[0] === '/v1/chat/completions'
  },
  streamHeaders() {
    return {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-request-id': randomId('req_'),
    }
  },
  encodeResponse,
  encodeStreamError(error) {
    return `data: ${JSON.stringify({ error: errorBody(error) })}\n\n`
  },
  encodeMalformedFrame() {
    return 'data: {"id":"chatcmpl-broken","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel\n\n'
  },
  encodeUnknownFrame() {
    return `data: ${JSON.stringify({ id: 'chatcmpl-future', object: 'chat.completion.agentx_future', created: 0, model: 'gpt-fake', choices: [] })}\n\n`
  },
  encodeHttpError,
  decodeRequest,
}
