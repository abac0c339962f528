import type { ContentBlock, StopReason } from '@agentx/core'
import type {
  ScenarioBlock,
  ScenarioError,
  ScenarioResponse,
  ScenarioUsage,
} from '../fake-provider/scenario.js'
import { decodeJsonSchemaFormat } from './decode-output.js'
import { type Json, pieces, randomId } from './dialect-helpers.js'
import type { DecodedRequest, EncodedHttpError, ReceivedRequest, WireDialect } from './wire-dialect.js'

/** `/v1/models/{model}:streamGenerateContent` (also `v1beta`, `v1alpha`); the query (`?alt=sse`) is ignored. */
const STREAM_PATH = /^\/(v1|v1beta|v1alpha)\/models\/([^/:]+):streamGenerateContent$/

/** One SSE event: a single `data:` line and a blank line, as the Gemini API sends it. */
function frame(data: Json): string {
  return `data: ${JSON.stringify(data)}\n\n`
}

/** Gemini has no dedicated tool-call reason: a response that calls functions ends with `STOP`. */
const FINISH_REASONS: Record<StopReason, string> = {
  end_turn: 'STOP',
  tool_use: 'STOP',
  max_tokens: 'MAX_TOKENS',
  content_filter: 'SAFETY',
  other: 'OTHER',
  error: 'MALFORMED_FUNCTION_CALL',
  aborted: 'STOP',
}

/** The google.rpc status name Gemini pairs with an HTTP status. */
const RPC_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  408: 'DEADLINE_EXCEEDED',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  502: 'UNKNOWN',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
}

const ERRORS: Record<ScenarioError['kind'], { status: number; message: string; reason?: string }> = {
  rate_limit: {
    status: 429,
    message: 'You exceeded your current quota, please check your plan and billing details.',
  },
  overloaded: { status: 503, message: 'The model is overloaded. Please try again later.' },
  authentication: {
    status: 400,
    message: 'API key not valid. Please pass a valid API key.',
    reason: 'API_KEY_INVALID',
  },
  permission: { status: 403, message: 'The caller does not have permission' },
  invalid_request: {
    status: 400,
    message:
      'Please ensure that function call turn comes immediately after a user turn or after a function response turn.',
  },
  not_found: {
    status: 404,
    message:
      'models/agentx-unknown is not found for API version v1, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.',
  },
  context_length: {
    status: 400,
    message: 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).',
  },
  server: {
    status: 500,
    message:
      'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  },
  unknown_resume: { status: 400, message: 'Request contains an invalid argument.' },
}

/** `{ error: { code, message, status, details? } }`, the body of every Gemini API error. */
function errorBody(error: ScenarioError): { status: number; body: Json } {
  const known = ERRORS[error.kind]
  const status = error.status ?? known.status
  const inner: Json = {
    code: status,
    message: error.message ?? known.message,
    status: RPC_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT'),
  }
  if (known.reason !== undefined) {
    inner.details = [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: known.reason,
        domain: 'googleapis.com',
        metadata: { service: 'generativelanguage.googleapis.com' },
      },
    ]
  }
  return { status, body: { error: inner } }
}

/**
 * Gemini's `usageMetadata`: `promptTokenCount` counts all input (cached included, also reported
 * as `cachedContentTokenCount`); output is split into `candidatesTokenCount` and
 * `thoughtsTokenCount`; `totalTokenCount` is their sum.
 */
function usageMetadata(usage: ScenarioUsage, fraction = 1): Json {
  const thoughts = usage.reasoningTokens ?? 0
  const candidates = Math.floor((usage.outputTokens - thoughts) * fraction)
  const thoughtsSoFar = Math.floor(thoughts * fraction)
  const metadata: Json = {
    promptTokenCount: usage.inputTokens,
    candidatesTokenCount: candidates,
    totalTokenCount: usage.inputTokens + candidates + thoughtsSoFar,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: usage.inputTokens }],
  }
  if (usage.cacheReadTokens !== undefined) metadata.cachedContentTokenCount = usage.cacheReadTokens
  if (usage.reasoningTokens !== undefined) metadata.thoughtsTokenCount = thoughtsSoFar
  return metadata
}

/** A function call's `args`: an object on the wire; `rawArguments` that is not an object is sent as it is. */
function functionCallOf(block: Extract<ScenarioBlock, { type: 'tool-call' }>): Json {
  const call: Json = { id: block.id, name: block.name }
  if (block.rawArguments === undefined) {
    call.args = block.input ?? {}
    return call
  }
  if (block.rawArguments.trim() === '') return call
  try {
    call.args = JSON.parse(block.rawArguments)
  } catch {
    call.args = block.rawArguments
  }
  return call
}

/** The parts of a response, one list per chunk: text and thinking per delta, a run of function calls in one chunk. */
function chunkParts(response: ScenarioResponse): Json[][] {
  const chunks: Json[][] = []
  const blocks = response.blocks
  let index = 0
  while (index < blocks.length) {
    const block = blocks[index] as ScenarioBlock
    if (block.type === 'tool-call') {
      // Gemini sends parallel calls whole, side by side in one chunk.
      const run: Json[] = []
      while (index < blocks.length && (blocks[index] as ScenarioBlock).type === 'tool-call') {
        run.push({
          functionCall: functionCallOf(blocks[index] as Extract<ScenarioBlock, { type: 'tool-call' }>),
        })
        index += 1
      }
      chunks.push(run)
      continue
    }
    const texts = pieces(block.text, response.deltaSize)
    texts.forEach((text, position) => {
      const part: Json = { text }
      if (block.type === 'thinking') {
        part.thought = true
        if (position === texts.length - 1 && block.signature !== undefined)
          part.thoughtSignature = block.signature
      }
      chunks.push([part])
    })
    index += 1
  }
  return chunks
}

function encodeResponse(response: ScenarioResponse, request: DecodedRequest): string[] {
  const responseId = response.responseId ?? randomId('', 14)
  const modelVersion = request.model ?? 'gemini-fake'
  const usage = response.usage
  const usageInChunks = usage !== undefined && response.usageInTrailingFrame !== true
  const chunks = chunkParts(response)
  const frames = chunks.map((parts, position) => {
    const data: Json = { candidates: [{ content: { parts, role: 'model' }, index: 0 }] }
    if (usageInChunks) data.usageMetadata = usageMetadata(usage, (position + 1) / (chunks.length + 1))
    data.modelVersion = modelVersion
    data.responseId = responseId
    return frame(data)
  })
  // The finish reason comes on a last chunk with an empty text part, as Gemini 3 sends it.
  const finish: Json = {
    candidates: [
      {
        content: { parts: [{ text: '' }], role: 'model' },
        finishReason: response.rawStopReason ?? FINISH_REASONS[response.stopReason],
        index: 0,
      },
    ],
  }
  if (usageInChunks) finish.usageMetadata = usageMetadata(usage)
  finish.modelVersion = modelVersion
  finish.responseId = responseId
  frames.push(frame(finish))
  if (usage !== undefined && response.usageInTrailingFrame === true) {
    frames.push(frame({ usageMetadata: usageMetadata(usage), modelVersion, responseId }))
  }
  return frames
}

function textOfParts(parts: unknown): string {
  if (!Array.isArray(parts)) return ''
  return parts.map((part) => String((part as Json).text ?? '')).join('\n')
}

function resultContent(response: unknown): { content: string; isError: boolean } {
  if (typeof response !== 'object' || response === null)
    return { content: JSON.stringify(response ?? null), isError: false }
  const record = response as Json
  const keys = Object.keys(record)
  if (keys.length === 1 && keys[0] === 'output' && typeof record.output === 'string') {
    return { content: record.output, isError: false }
  }
  if (keys.length === 1 && keys[0] === 'error') {
    return {
      content: typeof record.error === 'string' ? record.error : JSON.stringify(record.error),
      isError: true,
    }
  }
  return { content: JSON.stringify(record), isError: false }
}

function decodeRequest(request: ReceivedRequest): DecodedRequest {
  const [path = '', query = ''] = request.url.split('?', 2)
  const match = STREAM_PATH.exec(path)
  const body = JSON.parse(request.body || '{}') as Json
  const header = request.headers['x-goog-api-key']
  const apiKey =
    (Array.isArray(header) ? header[0] : header) ?? new URLSearchParams(query).get('key') ?? undefined

  // Calls without an id pair with the first unanswered call of the same name, as Gemini pairs them.
  const unanswered = new Map<string, string[]>()
  let anonymous = 0
  const contents = Array.isArray(body.contents) ? (body.contents as Json[]) : []
  const messages = contents.map((content) => {
    const blocks: ContentBlock[] = []
    for (const raw of Array.isArray(content.parts) ? (content.parts as Json[]) : []) {
      const signature = typeof raw.thoughtSignature === 'string' ? raw.thoughtSignature : undefined
      if (typeof raw.text === 'string' && raw.thought === true) {
        blocks.push({ type: 'thinking', text: raw.text, ...(signature === undefined ? {} : { signature }) })
      } else if (typeof raw.text === 'string') {
        blocks.push({ type: 'text', text: raw.text })
      } else if (raw.inlineData !== undefined) {
        const data = raw.inlineData as Json
        blocks.push({ type: 'image', mediaType: String(data.mimeType ?? ''), data: String(data.data ?? '') })
      } else if (raw.fileData !== undefined) {
        const data = raw.fileData as Json
        blocks.push({
          type: 'image',
          mediaType: String(data.mimeType ?? ''),
          url: String(data.fileUri ?? ''),
        })
      } else if (raw.functionCall !== undefined) {
        const call = raw.functionCall as Json
        const name = String(call.name ?? '')
        anonymous += 1
        const id = typeof call.id === 'string' ? call.id : `gemini-unnamed-call-${anonymous}`
        unanswered.set(name, [...(unanswered.get(name) ?? []), id])
        blocks.push({ type: 'tool_use', id, name, input: call.args ?? {} })
      } else if (raw.functionResponse !== undefined) {
        const response = raw.functionResponse as Json
        const name = String(response.name ?? '')
        const waiting = unanswered.get(name) ?? []
        const id = typeof response.id === 'string' ? response.id : (waiting[0] ?? '')
        unanswered.set(
          name,
          waiting.filter((candidate) => candidate !== id),
        )
        const { content: text, isError } = resultContent(response.response)
        blocks.push({
          type: 'tool_result',
          toolUseId: id,
          content: text,
          ...(isError ? { isError: true } : {}),
        })
      }
    }
    return { role: content.role === 'model' ? ('assistant' as const) : ('user' as const), content: blocks }
  })

  const tools = Array.isArray(body.tools) ? (body.tools as Json[]) : []
  const systemInstruction = body.systemInstruction as Json | string | undefined
  return {
    model: match?.[2] === undefined ? undefined : decodeURIComponent(match[2]),
    stream: match !== null,
    apiKey,
    systemPrompt:
      typeof systemInstruction === 'string'
        ? systemInstruction
        : systemInstruction === undefined
          ? undefined
          : textOfParts(systemInstruction.parts),
    messages,
    tools: tools.flatMap((tool) =>
      Array.isArray(tool.functionDeclarations)
        ? (tool.functionDeclarations as Json[]).map((declaration) => String(declaration.name))
        : [],
    ),
    resume: undefined,
    output: decodeGenerationConfigOutput(body.generationConfig),
  }
}

/**
 * Structured output in `generationConfig`: `responseMimeType: 'application/json'` with a
 * `responseJsonSchema` (JSON Schema) or a `responseSchema` (Gemini's OpenAPI subset). A JSON MIME
 * type without a schema asks for JSON, not for a shape, so it decodes as none.
 */
function decodeGenerationConfigOutput(config: unknown): DecodedRequest['output'] {
  if (typeof config !== 'object' || config === null) return undefined
  const { responseMimeType, responseJsonSchema, responseSchema } = config as Json
  if (responseMimeType !== 'application/json') return undefined
  return decodeJsonSchemaFormat({ schema: responseJsonSchema ?? responseSchema }, { tagged: false })
}

function encodeHttpError(error: ScenarioError): EncodedHttpError {
  const { status, body } = errorBody(error)
  return {
    status,
    headers: { 'content-type': 'application/json; charset=UTF-8', ...error.headers },
    body: JSON.stringify(body),
  }
}

/**
 * The Gemini API's `streamGenerateContent?alt=sse` as `@google/genai` speaks it: `POST
 * /{v1|v1beta}/models/{model}:streamGenerateContent?alt=sse` with an `x-goog-api-key` header; the
 * response is `data: <GenerateContentResponse>` events (no `event:` lines, no `[DONE]`) carrying
 * text, `thought` and `functionCall` parts (parallel calls side by side in one chunk, whole, with
 * their ids), cumulative `usageMetadata`, and a last chunk with the `finishReason`. Errors are
 * `{"error":{"code","message","status","details"}}` bodies, also sent as a `data:` frame
 * mid-stream. A bad API key is a 400 `INVALID_ARGUMENT` with reason `API_KEY_INVALID`.
 *
 * Pass it to `startFakeProvider({ dialect: geminiDialect })`; the SDK's `httpOptions.baseUrl` is
 * the server origin (the SDK adds the version segment: `v1` in @google/genai 3.x, `v1beta` in 2.x).
 */
export const geminiDialect: WireDialect = {
  name: 'gemini',
  basePath: '',
  usageParts: ['cacheReadTokens', 'reasoningTokens'],
  matches(request) {
    return request.method === 'POST' && STREAM_PATH.test(request.url.split('?')[0] ?? '')
  },
  streamHeaders() {
    return {
      'content-type': 'text/event-stream',
      'content-disposition': 'attachment',
      vary: 'Origin, X-Origin, Referer',
    }
  },
  encodeResponse,
  encodeStreamError(error) {
    return frame(errorBody(error).body)
  },
  encodeMalformedFrame() {
    return 'data: {"candidates":[{"content":{"parts":[{"te\n\n'
  },
  encodeUnknownFrame() {
    // Gemini has no event types; what appears over time are new fields in chunks clients must ignore.
    return frame({ agentxFutureField: { note: 'clients must ignore fields they do not know' } })
  },
  encodeHttpError,
  decodeRequest,
}
