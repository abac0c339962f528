// What the fake provider answers, in the contract kit's abstract terms (each dialect turns these
// into its provider's bytes).
import type { Scenario } from '@agentx/contract-tests'

/** A call the model makes. */
export interface Call {
  id: string
  name: string
  input: unknown
}

/** A response with some text and then tool calls (one batch). */
export function callsTools(calls: Call[], options: { text?: string; responseId?: string } = {}): Scenario {
  return {
    response: {
      blocks: [
        ...(options.text === undefined ? [] : [{ type: 'text' as const, text: options.text }]),
        ...calls.map((call) => ({ type: 'tool-call' as const, ...call })),
      ],
      stopReason: 'tool_use',
      usage: { inputTokens: 100, outputTokens: 20 },
      ...(options.responseId === undefined ? {} : { responseId: options.responseId }),
    },
  }
}

/** A response with text only. */
export function says(text: string, options: { responseId?: string } = {}): Scenario {
  return {
    response: {
      blocks: [{ type: 'text', text }],
      stopReason: 'end_turn',
      usage: { inputTokens: 150, outputTokens: 10 },
      ...(options.responseId === undefined ? {} : { responseId: options.responseId }),
    },
  }
}
