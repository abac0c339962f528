import { randomBytes } from 'node:crypto'
import type { ContentBlock, StopReason } from '@agentx/core'
import type {
  ScenarioBlock,
  ScenarioError,
  ScenarioResponse,
  ScenarioUsage,
} from '../fake-provider/scenario.js'
import { decodeJsonSchemaFormat, nested } from './decode-output.js'
import type { DecodedRequest, EncodedHttpError, ReceivedRequest, WireDialect } from './wire-dialect.js'

type Json = Record<string, unknown>

function randomId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString('hex')}`
}

/** Splits text into pieces of at most `size` code points (never inside a surrogate pair). */
function pieces(text: string, size: number | undefined): string[] {
  if (size === undefined || size <= 0) return [text]
  const characters = Array.from(text)
  const out: string[] = []
  for (let i = 0; i < characters.length; i += size) out.push(characters.slice(i, i + size).join(''))
  return out.length > 0 ? out : ['']
}

/** Round-robin over the event lists, so fragments of different items interleave. */
function interleave<T>(lists: T[][]): T[] {
  const out: T[] = []
  const longest = Math.max(0, ...lists.map((list) => list.length))
  for (let i = 0; i < longest; i += 1) for (const list of lists) if (i < list.length) out.push(list[i] as T)
  return out
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
    message: "Unsupported parameter: 'max_tokens' is not supported with this model.",
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
    param: 'input',
    message: 'Your input exceeds the context window of this model. Please adjust your input and try again.',
  },
  server: {
    status: 500,
    type: 'server_error',
    code: 'server_error',
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

/** The `error` object of an OpenAI error body for `error`. */
function errorBody(error: ScenarioError): Json {
  const known = ERRORS[error.kind]
  const body: Json = {
    message: error.message ?? known.message,
    type: known.type,
    param: known.param ?? null,
    code: known.code,
  }
  return body
}

/** Responses usage; optional details only when the scenario has them (absent stays absent). */
function wireUsage(usage: ScenarioUsage): Json {
  const result: Json = { input_tokens: usage.inputTokens }
  const inputDetails: Json = {}
  if (usage.cacheReadTokens !== undefined) inputDetails.cached_tokens = usage.cacheReadTokens
  if (usage.cacheWriteTokens !== undefined) inputDetails.cache_write_tokens = usage.cacheWriteTokens
  if (Object.keys(inputDetails).length > 0) result.input_tokens_details = inputDetails
  result.output_tokens = usage.outputTokens
  if (usage.reasoningTokens !== undefined)
    result.output_tokens_details = { reasoning_tokens: usage.reasoningTokens }
  result.total_tokens = usage.inputTokens + usage.outputTokens
  return result
}

/** `status` and `incomplete_details` of the final response for a stop reason. */
function terminalOf(response: ScenarioResponse): { type: string; status: string; incomplete: Json | null } {
  const raw = response.rawStopReason
  const stop: StopReason = response.stopReason
  if (raw === undefined && (stop === 'end_turn' || stop === 'tool_use')) {
    return { type: 'response.completed', status: 'completed', incomplete: null }
  }
  const reason =
    raw ?? (stop === 'max_tokens' ? 'max_output_tokens' : stop === 'content_filter' ? 'content_filter' : stop)
  return { type: 'response.incomplete', status: 'incomplete', incomplete: { reason } }
}

interface ItemFrames {
  added: Json
  deltas: Json[]
  done: Json[]
  item: Json
}

/** The events of one output item (without `sequence_number`, added when framing). */
function itemEvents(block: ScenarioBlock, outputIndex: number, deltaSize: number | undefined): ItemFrames {
  if (block.type === 'text') {
    const id = randomId('msg_')
    const part = { type: 'output_text', annotations: [], logprobs: [], text: '' }
    const item = {
      id,
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ ...part, text: block.text }],
    }
    return {
      added: {
        type: 'response.output_item.added',
        output_index: outputIndex,
        item: { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
      },
      deltas: [
        {
          type: 'response.content_part.added',
          item_id: id,
          output_index: outputIndex,
          content_index: 0,
          part,
        },
        ...pieces(block.text, deltaSize).map((delta) => ({
          type: 'response.output_text.delta',
          item_id: id,
          output_index: outputIndex,
          content_index: 0,
          delta,
          logprobs: [],
        })),
      ],
      done: [
        {
          type: 'response.output_text.done',
          item_id: id,
          output_index: outputIndex,
          content_index: 0,
          text: block.text,
          logprobs: [],
        },
        {
          type: 'response.content_part.done',
          item_id: id,
          output_index: outputIndex,
          content_index: 0,
          part: { ...part, text: block.text },
        },
        { type: 'response.output_item.done', output_index: outputIndex, item },
      ],
      item,
    }
  }
  if (block.type === 'thinking') {
    const id = randomId('rs_')
    const item: Json = { id, type: 'reasoning', summary: [{ type: 'summary_text', text: block.text }] }
    if (block.signature !== undefined) item.encrypted_content = block.signature
    const part = { type: 'summary_text', text: '' }
    return {
      added: {
        type: 'response.output_item.added',
        output_index: outputIndex,
        item: { id, type: 'reasoning', summary: [] },
      },
      deltas: [
        {
          type: 'response.reasoning_summary_part.added',
          item_id: id,
          output_index: outputIndex,
          summary_index: 0,
          part,
        },
        ...pieces(block.text, deltaSize).map((delta) => ({
          type: 'response.reasoning_summary_text.delta',
          item_id: id,
          output_index: outputIndex,
          summary_index: 0,
          delta,
        })),
      ],
      done: [
        {
          type: 'response.reasoning_summary_text.done',
          item_id: id,
          output_index: outputIndex,
          summary_index: 0,
          text: block.text,
        },
        {
          type: 'response.reasoning_summary_part.done',
          item_id: id,
          output_index: outputIndex,
          summary_index: 0,
          part: { ...part, text: block.text },
        },
        { type: 'response.output_item.done', output_index: outputIndex, item },
      ],
      item,
    }
  }
  const id = randomId('fc_')
  const argumentsText = block.rawArguments ?? JSON.stringify(block.input ?? {})
  const item = {
    id,
    type: 'function_call',
    status: 'completed',
    arguments: argumentsText,
    call_id: block.id,
    name: block.name,
  }
  return {
    added: {
      type: 'response.output_item.added',
      output_index: outputIndex,
      item: { ...item, status: 'in_progress', arguments: '' },
    },
    deltas: (argumentsText === '' ? [] : pieces(argumentsText, deltaSize)).map((delta) => ({
      type: 'response.function_call_arguments.delta',
      item_id: id,
      output_index: outputIndex,
      delta,
    })),
    done: [
      {
        type: 'response.function_call_arguments.done',
        item_id: id,
        output_index: outputIndex,
        arguments: argumentsText,
      },
      { type: 'response.output_item.done', output_index: outputIndex, item },
    ],
    item,
  }
}

function encodeResponse(scenario: ScenarioResponse, request: DecodedRequest): string[] {
  const responseId = scenario.responseId ?? randomId('resp_')
  const createdAt = Math.floor(Date.now() / 1000)
  const base: Json = {
    id: responseId,
    object: 'response',
    created_at: createdAt,
    status: 'in_progress',
    error: null,
    incomplete_details: null,
    model: request.model ?? 'gpt-fake',
    output: [],
    parallel_tool_calls: true,
    previous_response_id: request.resume ?? null,
    store: true,
    usage: null,
  }
  const events: Json[] = [
    { type: 'response.created', response: base },
    { type: 'response.in_progress', response: base },
  ]
  const items = scenario.blocks.map((block, index) => itemEvents(block, index, scenario.deltaSize))
  const isTool = (index: number): boolean => scenario.blocks[index]?.type === 'tool-call'
  let index = 0
  while (index < items.length) {
    const current = items[index] as ItemFrames
    if (scenario.interleaveToolCalls && isTool(index) && isTool(index + 1)) {
      // Parallel calls: every item is added (in output order), then their argument deltas interleave.
      let end = index
      while (end < items.length && isTool(end)) end += 1
      const run = items.slice(index, end)
      events.push(...run.map((item) => item.added), ...interleave(run.map((item) => item.deltas)))
      for (const item of run) events.push(...item.done)
      index = end
      continue
    }
    events.push(current.added, ...current.deltas, ...current.done)
    index += 1
  }
  const terminal = terminalOf(scenario)
  events.push({
    type: terminal.type,
    response: {
      ...base,
      status: terminal.status,
      incomplete_details: terminal.incomplete,
      output: items.map((item) => item.item),
      usage: scenario.usage ? wireUsage(scenario.usage) : null,
    },
  })
  return events.map((event, sequence) => frame({ ...event, sequence_number: sequence }))
}

/** `event: <type>` plus one `data:` line, as OpenAI streams the Responses API. */
function frame(event: Json): string {
  return `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`
}

function imageBlock(url: string): ContentBlock {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url)
  if (match) return { type: 'image', mediaType: match[1] as string, data: match[2] as string }
  return { type: 'image', mediaType: '', url }
}

function partsToBlocks(content: unknown): ContentBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  if (!Array.isArray(content)) return []
  return content.flatMap((raw): ContentBlock[] => {
    const part = raw as Json
    if (part.type === 'input_text' || part.type === 'output_text' || part.type === 'text') {
      return [{ type: 'text', text: String(part.text ?? '') }]
    }
    if (part.type === 'input_image') {
      const url = typeof part.image_url === 'string' ? part.image_url : ''
      return [imageBlock(url)]
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
  if (typeof body.instructions === 'string') system.push(body.instructions)
  const messages: DecodedRequest['messages'] = []
  const push = (role: 'user' | 'assistant', blocks: ContentBlock[]): void => {
    if (blocks.length === 0) return
    const last = messages[messages.length - 1]
    if (last && last.role === role) last.content.push(...blocks)
    else messages.push({ role, content: blocks })
  }
  const input = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input
  for (const raw of Array.isArray(input) ? (input as Json[]) : []) {
    const type = raw.type ?? 'message'
    if (type === 'message') {
      if (raw.role === 'system' || raw.role === 'developer') {
        system.push(
          partsToBlocks(raw.content)
            .map((block) => (block.type === 'text' ? block.text : ''))
            .join(''),
        )
      } else push(raw.role === 'assistant' ? 'assistant' : 'user', partsToBlocks(raw.content))
    } else if (type === 'function_call') {
      push('assistant', [
        {
          type: 'tool_use',
          id: String(raw.call_id),
          name: String(raw.name),
          input: parseArguments(raw.arguments),
        },
      ])
    } else if (type === 'function_call_output') {
      const output = raw.output
      push('user', [
        {
          type: 'tool_result',
          toolUseId: String(raw.call_id),
          content: typeof output === 'string' ? output : partsToBlocks(output),
        },
      ])
    } else if (type === 'reasoning') {
      const summary = Array.isArray(raw.summary) ? (raw.summary as Json[]) : []
      push('assistant', [
        {
          type: 'thinking',
          text: summary.map((part) => String(part.text ?? '')).join('\n\n'),
          ...(typeof raw.encrypted_content === 'string' ? { signature: raw.encrypted_content } : {}),
        },
      ])
    }
  }
  const tools = Array.isArray(body.tools) ? (body.tools as Json[]) : []
  return {
    model: typeof body.model === 'string' ? body.model : undefined,
    stream: body.stream === true,
    apiKey: bearer,
    systemPrompt: system.length > 0 ? system.join('\n') : undefined,
    messages,
    tools: tools.filter((tool) => tool.type === 'function').map((tool) => String(tool.name)),
    resume: typeof body.previous_response_id === 'string' ? body.previous_response_id : undefined,
    output: decodeJsonSchemaFormat(nested(body, 'text', 'format'), { tagged: true }),
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
 * The OpenAI Responses API (`POST /v1/responses`) as the `openai` SDK streams it: `event:` +
 * `data:` frames with a monotonic `sequence_number`, `response.created` first, per output item
 * `output_item.added` → deltas (`output_text`, `reasoning_summary_text`,
 * `function_call_arguments`) → `.done` events → `output_item.done`, then `response.completed`
 * (or `response.incomplete` with `incomplete_details.reason`) carrying the full response and its
 * usage. Item ids are consistent, as the SDK's strict accumulator demands. Thinking is a
 * `reasoning` item (summary text, signature as `encrypted_content`); errors are JSON
 * `{ error: { message, type, param, code } }` with an `x-request-id` header, an unknown
 * `previous_response_id` a 400 `previous_response_not_found`.
 *
 * Pass it to `startFakeProvider({ dialect: openAIResponsesDialect })` and give the SDK
 * `baseURL: fake.baseURL` (origin + `/v1`).
 */
export const openAIResponsesDialect: WireDialect = {
  name: 'openai-responses',
  basePath: '/v1',
  usageParts: ['cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens'],
  matches(request) {
    return request.method === 'POST' && request.url.split('?')[0] === '/v1/responses'
  },
  streamHeaders() {
    return {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-request-id': randomId('req_'),
      'openai-processing-ms': '12',
    }
  },
  encodeResponse,
  encodeStreamError(error) {
    const body = errorBody(error)
    return frame({
      type: 'error',
      sequence_number: 0,
      code: body.code,
      message: body.message,
      param: body.param,
    })
  },
  encodeMalformedFrame() {
    return 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"msg_0","output_index":0,"content_index":0,"delta":"Hel\n\n'
  },
  encodeUnknownFrame() {
    return frame({
      type: 'response.agentx_future_event',
      sequence_number: 0,
      detail: { note: 'clients must ignore unknown event types' },
    })
  },
  encodeHttpError,
  decodeRequest,
}
