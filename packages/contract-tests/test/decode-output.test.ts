import { describe, expect, it } from 'vitest'
import { anthropicMessagesDialect } from '../src/dialects/anthropic-messages-dialect.js'
import { geminiDialect } from '../src/dialects/gemini-dialect.js'
import { openAIChatDialect } from '../src/dialects/openai-chat-dialect.js'
import { openAIResponsesDialect } from '../src/dialects/openai-responses-dialect.js'
import type { ReceivedRequest, WireDialect } from '../src/dialects/wire-dialect.js'

const SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }

function decode(dialect: WireDialect, body: Record<string, unknown>, url = '/v1/any') {
  const request: ReceivedRequest = { method: 'POST', url, headers: {}, body: JSON.stringify(body) }
  return dialect.decodeRequest(request).output
}

const GEMINI_URL = '/v1/models/gemini-x:streamGenerateContent?alt=sse'

describe('each dialect decodes the structured-output field of its protocol (A-REQ-011, A-REQ-012)', () => {
  it('Anthropic: output_config.format, and the beta output_format it replaced', () => {
    expect(
      decode(anthropicMessagesDialect, {
        output_config: { effort: 'low', format: { type: 'json_schema', schema: SCHEMA } },
      }),
    ).toEqual({ schema: SCHEMA })
    expect(
      decode(anthropicMessagesDialect, { output_format: { type: 'json_schema', schema: SCHEMA } }),
    ).toEqual({
      schema: SCHEMA,
    })
    expect(decode(anthropicMessagesDialect, { output_config: { effort: 'low' } })).toBeUndefined()
    expect(decode(anthropicMessagesDialect, {})).toBeUndefined()
  })

  it('OpenAI Responses: text.format of type json_schema, with its name and strict flag', () => {
    expect(
      decode(openAIResponsesDialect, {
        text: {
          verbosity: 'low',
          format: { type: 'json_schema', name: 'place', schema: SCHEMA, strict: true },
        },
      }),
    ).toEqual({ schema: SCHEMA, name: 'place', strict: true })
    expect(decode(openAIResponsesDialect, { text: { format: { type: 'text' } } })).toBeUndefined()
    expect(decode(openAIResponsesDialect, { text: { format: { type: 'json_object' } } })).toBeUndefined()
    expect(decode(openAIResponsesDialect, {})).toBeUndefined()
  })

  it('OpenAI Chat Completions: response_format of type json_schema, with its name and strict flag', () => {
    expect(
      decode(openAIChatDialect, {
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'place', schema: SCHEMA, strict: false },
        },
      }),
    ).toEqual({ schema: SCHEMA, name: 'place', strict: false })
    expect(decode(openAIChatDialect, { response_format: { type: 'json_object' } })).toBeUndefined()
    expect(decode(openAIChatDialect, {})).toBeUndefined()
  })

  it('Gemini: generationConfig.responseMimeType application/json with responseJsonSchema (or responseSchema)', () => {
    expect(
      decode(
        geminiDialect,
        { generationConfig: { responseMimeType: 'application/json', responseJsonSchema: SCHEMA } },
        GEMINI_URL,
      ),
    ).toEqual({ schema: SCHEMA })
    expect(
      decode(
        geminiDialect,
        { generationConfig: { responseMimeType: 'application/json', responseSchema: SCHEMA } },
        GEMINI_URL,
      ),
    ).toEqual({ schema: SCHEMA })
    // JSON without a schema, or a schema with another MIME type, asks for no shape.
    expect(
      decode(geminiDialect, { generationConfig: { responseMimeType: 'application/json' } }, GEMINI_URL),
    ).toBeUndefined()
    expect(
      decode(
        geminiDialect,
        { generationConfig: { responseMimeType: 'text/plain', responseJsonSchema: SCHEMA } },
        GEMINI_URL,
      ),
    ).toBeUndefined()
    expect(decode(geminiDialect, {}, GEMINI_URL)).toBeUndefined()
  })
})
