import type { ContentBlock, StopReason } from '@agentx/core'
import type { ScenarioBlock, ScenarioResponse, ScenarioUsage } from '../fake-provider/scenario.js'
import { decodeJsonSchemaFormat, nested } from './decode-output.js'
import {
  header,
  imageBlock,
  interleave,
  type Json,
  parseArguments,
  pieces,
  randomId,
} from './dialect-helpers.js'
import { encodeOpenAIError, openAIErrorBody } from './openai-errors.js'
import type { DecodedRequest, ReceivedRequest, WireDialect } from './wire-dialect.js'

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
    const id = randomId('msg_', 12, 'hex')
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
    const id = randomId('rs_', 12, 'hex')
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
  const id = randomId('fc_', 12, 'hex')
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
  const responseId = scenario.responseId ?? randomId('resp_', 12, 'hex')
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
      'x-request-id': randomId('req_', 12, 'hex'),
      'openai-processing-ms': '12',
    }
  },
  encodeResponse,
  encodeStreamError(error) {
    const body = openAIErrorBody('responses', error)
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
  encodeHttpError: (error) => encodeOpenAIError('responses', error),
  decodeRequest,
}
