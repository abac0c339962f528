import type { ContentBlock } from '../contracts/messages.js'
import type { AgentError } from '../errors/agent-error.js'
import { ValidationError } from '../errors/validation-error.js'
import { cloneJson } from '../persistence/json-copy.js'
import { parseDataUrl } from '../provider/content-blocks.js'
import { isStandardSchema, type SchemaLike, toJsonSchema } from '../tools/schema.js'
import { schemaShapeProblem } from '../tools/schema-shape.js'
import { validateTools } from '../tools/validate-tools.js'
import type { PendingAnswer } from './approvals.js'
import type { SendOptions } from './session.js'

const SEND_OPTION_KEYS = [
  'signal',
  'model',
  'systemPrompt',
  'tools',
  'maxSteps',
  'maxOutputTokens',
  'temperature',
  'providerOptions',
  'agent',
  'output',
] as const satisfies ReadonlyArray<keyof SendOptions>

/** What a `send` carries: content for a new user message, or answers to pending tool calls. */
export type SendInput =
  | { kind: 'content'; content: string | ContentBlock[] }
  | { kind: 'answers'; answers: PendingAnswer[] }

const ANSWER_TYPES = new Set(['tool_approval', 'tool_result'])

/**
 * Checks what a caller sends: content (see {@link validateContent}), or a non-empty array of
 * answers (`tool_approval` / `tool_result` items, DESIGN §10.1) — never the two mixed. Returns a
 * JSON copy the session owns. Throws {@link ValidationError}; nothing is stored when it does.
 */
export function validateSendInput(input: unknown): SendInput {
  if (Array.isArray(input) && input.length > 0 && input.some((item) => ANSWER_TYPES.has(item?.type))) {
    input.forEach(validateAnswer)
    return { kind: 'answers', answers: cloneJson(input as PendingAnswer[], 'content') }
  }
  return { kind: 'content', content: validateContent(input) }
}

function validateAnswer(answer: unknown, index: number): void {
  const at = `content[${index}]`
  if (!isPlainObject(answer) || !ANSWER_TYPES.has(answer.type as string)) {
    throw new ValidationError(`${at}: answers to pending tool calls cannot be mixed with other content.`)
  }
  if (typeof answer.toolUseId !== 'string' || answer.toolUseId === '') {
    throw new ValidationError(`${at}.toolUseId must be the id of a pending tool call.`)
  }
  if (answer.type === 'tool_approval') {
    if (typeof answer.approved !== 'boolean')
      throw new ValidationError(`${at}.approved must be true or false.`)
    if (answer.reason !== undefined && typeof answer.reason !== 'string') {
      throw new ValidationError(`${at}.reason must be a string.`)
    }
  } else {
    validateResultContent(answer.content, `${at}.content`)
    if (answer.isError !== undefined && typeof answer.isError !== 'boolean') {
      throw new ValidationError(`${at}.isError must be a boolean.`)
    }
  }
}

/**
 * Checks content for a new user message and returns a JSON copy the session owns: a non-empty
 * string, or a non-empty array of well-formed `text` and `image` blocks. Throws
 * {@link ValidationError} naming the first problem. Nothing has been stored or sent when it throws.
 */
export function validateContent(content: unknown): string | ContentBlock[] {
  if (typeof content === 'string') {
    if (content.length === 0) throw new ValidationError('content must not be empty.')
    return content
  }
  if (!Array.isArray(content)) {
    throw new ValidationError(
      `content must be a non-empty string or a non-empty array of content blocks, got ${describe(content)}.`,
    )
  }
  if (content.length === 0) throw new ValidationError('content must not be an empty array.')
  for (const [index, block] of content.entries()) validateBlock(block, index, 'content')
  return cloneJson(content as ContentBlock[], 'content')
}

/**
 * Checks the content of a tool result — a client tool's answer, or what a tool's `execute`
 * returned — with the rules of user content: a non-empty string, or a non-empty array of
 * well-formed `text` and `image` blocks (what every provider takes in a tool result). Throws
 * {@link ValidationError} naming the first problem, its path starting with `where`.
 */
export function validateResultContent(content: unknown, where: string): void {
  if (typeof content === 'string') {
    if (content.length === 0) throw new ValidationError(`${where} must not be empty.`)
    return
  }
  if (!Array.isArray(content) || content.length === 0) {
    throw new ValidationError(
      `${where} must be a non-empty string or a non-empty array of text and image blocks, got ${Array.isArray(content) ? 'an empty array' : describe(content)}.`,
    )
  }
  for (const [index, block] of content.entries()) validateBlock(block, index, where, true)
}

function validateBlock(block: unknown, index: number, where: string, inResult = false): void {
  const at = `${where}[${index}]`
  if (typeof block !== 'object' || block === null || Array.isArray(block)) {
    throw new ValidationError(
      `${at} must be a content block object such as { type: 'text', text }, got ${describe(block)}.`,
    )
  }
  const value = block as Record<string, unknown>
  switch (value.type) {
    case 'text':
      if (typeof value.text !== 'string' || value.text.length === 0) {
        throw new ValidationError(`${at}.text must be a non-empty string.`)
      }
      break
    case 'image':
      checkImage(value, at)
      break
    case 'thinking':
    case 'tool_use':
    case 'tool_result':
    case 'tool_approval':
      if (inResult) {
        throw new ValidationError(
          `${at}: a tool result holds 'text' and 'image' blocks, not '${value.type}'.`,
        )
      }
      if (value.type === 'thinking' || value.type === 'tool_use') {
        throw new ValidationError(`${at}: '${value.type}' blocks come from the model, not from a caller.`)
      }
      throw new ValidationError(`${at}: answers to pending tool calls cannot be mixed with other content.`)
    default:
      throw new ValidationError(`${at}.type ${describe(value.type)} is unknown; use 'text' or 'image'.`)
  }
  if (value.providerMetadata !== undefined && !isPlainObject(value.providerMetadata)) {
    throw new ValidationError(`${at}.providerMetadata must be an object keyed by provider name.`)
  }
}

/** Checks the options of one `send`/`stream` call. Unknown keys are refused with the closest known one. */
export function validateSendOptions(options: unknown): SendOptions {
  if (options === undefined) return {}
  if (!isPlainObject(options))
    throw new ValidationError(`send options must be an object, got ${describe(options)}.`)
  rejectUnknownKeys(options, SEND_OPTION_KEYS, 'send option', (message) => new ValidationError(message))
  const value = options as Record<string, unknown>
  if (value.signal !== undefined && !(value.signal instanceof AbortSignal)) {
    throw new ValidationError('signal must be an AbortSignal.')
  }
  optionalString(value.model, 'model', true)
  optionalString(value.systemPrompt, 'systemPrompt', false)
  optionalString(value.agent, 'agent', true)
  optionalInteger(value.maxSteps, 'maxSteps', 1)
  optionalInteger(value.maxOutputTokens, 'maxOutputTokens', 1)
  if (
    value.temperature !== undefined &&
    (typeof value.temperature !== 'number' || !(value.temperature >= 0))
  ) {
    throw new ValidationError(`temperature must be a number >= 0, got ${describe(value.temperature)}.`)
  }
  if (value.providerOptions !== undefined && !isPlainObject(value.providerOptions)) {
    throw new ValidationError('providerOptions must be an object keyed by provider name.')
  }
  if (value.tools !== undefined) {
    validateTools(value.tools, 'tools', (message) => new ValidationError(message))
  }
  if (value.output !== undefined) {
    const output = value.output
    if (!isPlainObject(output) || (!isPlainObject(output.schema) && !isStandardSchema(output.schema))) {
      throw new ValidationError(
        'output must be { schema, name? } with a JSON Schema object or a Standard Schema.',
      )
    }
    if (
      output.name !== undefined &&
      (typeof output.name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(output.name))
    ) {
      throw new ValidationError('output.name must be 1–64 letters, digits, _ or -.')
    }
    rejectUnknownKeys(output, ['schema', 'name'], 'output option', (message) => new ValidationError(message))
    if (!isStandardSchema(output.schema)) {
      const problem = schemaShapeProblem(output.schema, 'output.schema')
      if (problem !== undefined) throw new ValidationError(problem)
    }
    try {
      toJsonSchema(output.schema as SchemaLike, 'output.schema')
    } catch (error) {
      // A send's own option: bad input (ValidationError), not the agent's configuration.
      throw new ValidationError((error as Error).message, { cause: (error as Error).cause })
    }
  }
  return options as SendOptions
}

// The tool list check lives with the tools; the agent's config check imports it from here too.
export { validateTools }

/** Refuses keys of `value` that are not in `known`, naming the closest known key. */
export function rejectUnknownKeys(
  value: object,
  known: readonly string[],
  what: string,
  fail: (message: string) => AgentError,
): void {
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue
    const closest = closestKey(key, known)
    throw fail(`Unknown ${what} '${key}'${closest === undefined ? '' : ` — did you mean '${closest}'?`}`)
  }
}

/** The known key with the smallest edit distance to `key`, if it is close enough to be a typo. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase())
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(best.length / 3)) ? best : undefined
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution)
    }
    previous = current
  }
  return previous[b.length]!
}

function optionalString(value: unknown, name: string, nonEmpty: boolean): void {
  if (value === undefined) return
  if (typeof value !== 'string' || (nonEmpty && value === '')) {
    throw new ValidationError(
      `${name} must be a ${nonEmpty ? 'non-empty ' : ''}string, got ${describe(value)}.`,
    )
  }
}

function optionalInteger(value: unknown, name: string, min: number): void {
  if (value !== undefined && (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)) {
    throw new ValidationError(`${name} must be an integer >= ${min}, got ${describe(value)}.`)
  }
}

/** Whether `value` is a plain object (not an array, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A short description of a value for error messages (never its full content). */
export function describe(value: unknown): string {
  if (value === null) return 'null'
  if (value === undefined) return 'nothing'
  if (Array.isArray(value)) return 'an array'
  // Only short identifiers are echoed: a misplaced secret must never end up in an error message.
  if (typeof value === 'string')
    return /^[\w.-]{0,24}$/.test(value) ? `'${value}'` : `a string of ${value.length} characters`
  if (typeof value === 'object') return 'an object'
  return `${typeof value} ${String(value)}`
}

/** An image media type: `image/` and a subtype (`png`, `jpeg`, `svg+xml`, …). */
const IMAGE_MEDIA_TYPE = /^image\/[a-z0-9][a-z0-9.+-]*$/i
/** Standard base64 (RFC 4648 §4), padding optional, no whitespace. */
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/

const isBase64 = (text: string): boolean => BASE64.test(text) && text.length % 4 !== 1

/**
 * An image block a provider can take: an image media type and either base64 `data` or an
 * absolute `url` (a base64 data URL included). A data URL given as `data` is refused with the fix.
 */
function checkImage(value: Record<string, unknown>, at: string): void {
  if (typeof value.mediaType !== 'string' || !IMAGE_MEDIA_TYPE.test(value.mediaType)) {
    throw new ValidationError(
      `${at}.mediaType ${describe(value.mediaType)} is not an image media type such as 'image/png'.`,
    )
  }
  const hasData = typeof value.data === 'string' && value.data !== ''
  const hasUrl = typeof value.url === 'string' && value.url !== ''
  if (hasData === hasUrl) throw new ValidationError(`${at} needs either base64 data or a url.`)
  if (hasData) {
    const data = value.data as string
    if (data.startsWith('data:')) {
      throw new ValidationError(
        `${at}.data is a data URL; give only its base64 payload (after 'base64,') as data.`,
      )
    }
    if (!isBase64(data)) {
      throw new ValidationError(`${at}.data is not base64 (A–Z, a–z, 0–9, '+', '/', '=' padding; no spaces).`)
    }
    return
  }
  const url = value.url as string
  if (url.startsWith('data:')) {
    // A base64 data URL is taken (the adapters send its payload); any other data URL is not.
    const payload = parseDataUrl(url)?.data
    if (payload === undefined || !isBase64(payload)) {
      throw new ValidationError(`${at}.url is a data URL but not 'data:<media type>;base64,<base64>'.`)
    }
    return
  }
  if (!URL.canParse(url) || new URL(url).protocol === 'javascript:') {
    throw new ValidationError(`${at}.url ${describe(url)} is not an absolute URL such as 'https://…'.`)
  }
}
