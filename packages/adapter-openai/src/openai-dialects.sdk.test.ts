import {
  type FakeProvider,
  openAIChatDialect,
  openAIResponsesDialect,
  type Scenario,
  startFakeProvider,
} from '@agentx/contract-tests'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// The dialects must satisfy the SDK's own strict stream accumulators, not only this adapter.
let responses: FakeProvider
let chat: FakeProvider

beforeAll(async () => {
  responses = await startFakeProvider({ dialect: openAIResponsesDialect })
  chat = await startFakeProvider({ dialect: openAIChatDialect })
})
afterAll(async () => {
  await Promise.all([responses.close(), chat.close()])
})

const rich: Scenario = {
  response: {
    blocks: [
      { type: 'thinking', text: 'Think 🤔', signature: 'enc==' },
      { type: 'text', text: 'Héllo 👋🏽' },
      { type: 'tool-call', id: 'call_1', name: 'a', input: { x: 'é"\\' } },
      { type: 'tool-call', id: 'call_2', name: 'b', input: { y: [1, 2] } },
    ],
    stopReason: 'tool_use',
    responseId: 'resp_sdk',
    deltaSize: 2,
    interleaveToolCalls: true,
    usage: { inputTokens: 11, outputTokens: 7, cacheReadTokens: 3, reasoningTokens: 2 },
    usageInTrailingFrame: true,
  },
}

describe('OpenAI dialects against the openai SDK accumulators', () => {
  it('openAIResponsesDialect passes responses.stream() and yields the final response', async () => {
    responses.enqueue(rich)
    const client = new OpenAI({ apiKey: 'sk-dialect', baseURL: responses.baseURL, maxRetries: 0 })
    const stream = client.responses.stream({ model: 'gpt-x', input: 'hi' })
    const final = await stream.finalResponse()
    expect(final.id).toBe('resp_sdk')
    expect(final.output_text).toBe('Héllo 👋🏽')
    expect(final.output.map((item) => item.type)).toEqual([
      'reasoning',
      'message',
      'function_call',
      'function_call',
    ])
    const calls = final.output.filter((item) => item.type === 'function_call')
    expect(calls.map((call) => [call.call_id, JSON.parse(call.arguments)])).toEqual([
      ['call_1', { x: 'é"\\' }],
      ['call_2', { y: [1, 2] }],
    ])
    expect(final.usage).toMatchObject({
      input_tokens: 11,
      output_tokens: 7,
      input_tokens_details: { cached_tokens: 3 },
    })
    expect(responses.requests[0]?.decoded).toMatchObject({
      model: 'gpt-x',
      stream: true,
      apiKey: 'sk-dialect',
    })
  })

  it('openAIChatDialect passes chat.completions.stream() and yields the final completion', async () => {
    chat.enqueue(rich)
    const client = new OpenAI({ apiKey: 'sk-dialect', baseURL: chat.baseURL, maxRetries: 0 })
    const stream = client.chat.completions.stream({
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'hi' }],
      stream_options: { include_usage: true },
    })
    const final = await stream.finalChatCompletion()
    const choice = final.choices[0]!
    expect(choice.finish_reason).toBe('tool_calls')
    expect(choice.message.content).toBe('Héllo 👋🏽')
    expect(
      choice.message.tool_calls?.map(
        (call) => call.type === 'function' && [call.id, JSON.parse(call.function.arguments)],
      ),
    ).toEqual([
      ['call_1', { x: 'é"\\' }],
      ['call_2', { y: [1, 2] }],
    ])
    expect(final.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 })
  })

  it('openAIResponsesDialect errors become the SDK error classes', async () => {
    responses.enqueue({ httpError: { kind: 'rate_limit', headers: { 'retry-after-ms': '5' } } })
    const client = new OpenAI({ apiKey: 'sk-dialect', baseURL: responses.baseURL, maxRetries: 0 })
    const error = await client.responses
      .create({ model: 'gpt-x', input: 'hi', stream: true })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(OpenAI.RateLimitError)
    expect(error).toMatchObject({ status: 429, code: 'rate_limit_exceeded' })
  })
})
