import type { ContentBlock, StopReason } from '@agentx/core'
import type { ScenarioResponse, ScenarioUsage } from '../fake-provider/scenario.js'
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

const FINISH_REASONS: Record<StopReason, string> = {
  end_turn: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  content_filter: 'content_filter',
  other: 'other',
  aborted: 'stop',
  error: 'stop',
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
    return `data: ${JSON.stringify({ error: openAIErrorBody('chat', error) })}\n\n`
  },
  encodeMalformedFrame() {
    return 'data: {"id":"chatcmpl-broken","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel\n\n'
  },
  encodeUnknownFrame() {
    return `data: ${JSON.stringify({ id: 'chatcmpl-future', object: 'chat.completion.agentx_future', created: 0, model: 'gpt-fake', choices: [] })}\n\n`
  },
  encodeHttpError: (error) => encodeOpenAIError('chat', error),
  decodeRequest,
}
