import { ValidationError } from '@agentx/core'
import type { PlaygroundSendInput, PlaygroundSendOptions } from './playground-hub.js'

/** The longest message text the API takes. */
export const MAX_CONTENT_LENGTH = 100_000
const MAX_ANSWERS = 100
const MAX_MODEL_LENGTH = 200
const MAX_AGENT_LENGTH = 48

/**
 * Reads the body of `POST /api/sessions/:id/messages` (DESIGN §9): `content` — a non-empty string,
 * or the answers to pending tool calls (an array of `tool_approval` / `tool_result` objects, checked
 * in detail by the kernel) — and the per-send options of {@link readSendOptions}.
 */
export function readSendBody(body: Record<string, unknown>): {
  content: PlaygroundSendInput
  options: PlaygroundSendOptions
} {
  const content = body.content
  if (typeof content === 'string') {
    if (content.trim() === '') throw new ValidationError('content must be a non-empty string.')
    if (content.length > MAX_CONTENT_LENGTH) {
      throw new ValidationError(
        `content must be at most ${MAX_CONTENT_LENGTH} UTF-16 code units (characters outside the BMP, such as emoji, count as two).`,
      )
    }
  } else if (Array.isArray(content)) {
    if (content.length === 0 || content.length > MAX_ANSWERS) {
      throw new ValidationError(`content as an array must hold 1 to ${MAX_ANSWERS} answers.`)
    }
  } else {
    throw new ValidationError('content must be a non-empty string or an array of tool answers.')
  }
  const { content: _content, ...rest } = body
  return { content: content as PlaygroundSendInput, options: readSendOptions(rest) }
}

/**
 * Reads the per-send options of a send or retry body: `agent` (a profile), `model`, `temperature`
 * (0–2), `maxOutputTokens` (a positive integer) and `output` (structured output, passed on to the
 * kernel as it is). Unknown keys are refused, like the kernel refuses unknown send options.
 */
export function readSendOptions(
  body: Record<string, unknown>,
  what: 'send' | 'retry' = 'send',
): PlaygroundSendOptions {
  const options: PlaygroundSendOptions = {}
  for (const key of Object.keys(body)) {
    if (!['agent', 'model', 'temperature', 'maxOutputTokens', 'output'].includes(key)) {
      throw new ValidationError(
        what === 'send'
          ? `Unknown field '${key}'; a send takes content, agent, model, temperature, maxOutputTokens and output.`
          : `Unknown field '${key}'; a retry asks again for the stored conversation and takes agent, model, temperature, maxOutputTokens and output.`,
      )
    }
  }
  const { agent, model, temperature, maxOutputTokens, output } = body
  if (agent !== undefined) {
    if (typeof agent !== 'string' || agent === '' || agent.length > MAX_AGENT_LENGTH)
      throw new ValidationError('agent must be the name of an agent profile.')
    options.agent = agent
  }
  if (model !== undefined) {
    if (typeof model !== 'string' || model.trim() === '' || model.length > MAX_MODEL_LENGTH)
      throw new ValidationError(`model must be a non-empty string of at most ${MAX_MODEL_LENGTH} characters.`)
    options.model = model.trim()
  }
  if (temperature !== undefined) {
    if (
      typeof temperature !== 'number' ||
      !Number.isFinite(temperature) ||
      temperature < 0 ||
      temperature > 2
    )
      throw new ValidationError('temperature must be a number from 0 to 2.')
    options.temperature = temperature
  }
  if (maxOutputTokens !== undefined) {
    if (
      !Number.isInteger(maxOutputTokens) ||
      (maxOutputTokens as number) < 1 ||
      (maxOutputTokens as number) > 1_000_000
    )
      throw new ValidationError('maxOutputTokens must be an integer from 1 to 1000000.')
    options.maxOutputTokens = maxOutputTokens as number
  }
  if (output !== undefined) {
    if (typeof output !== 'object' || output === null || Array.isArray(output))
      throw new ValidationError('output must be an object { schema, name? }.')
    options.output = output
  }
  return options
}
