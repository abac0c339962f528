// What the fake providers answer, in the contract kit's abstract terms (each dialect turns these
// into its provider's bytes).
import type { Scenario, ScenarioError, ScenarioUsage } from '@agentx/contract-tests'

/** A call the model makes. */
export interface Call {
  id: string
  name: string
  input: unknown
}

interface ResponseOptions {
  text?: string
  /** The provider's response id (OpenAI Responses `resp_…`). */
  responseId?: string
  usage?: ScenarioUsage
}

/** A response with some text (optional) and then tool calls (one batch). */
export function callsTools(calls: Call[], options: ResponseOptions = {}): Scenario {
  return {
    response: {
      blocks: [
        ...(options.text === undefined ? [] : [{ type: 'text' as const, text: options.text }]),
        ...calls.map((call) => ({ type: 'tool-call' as const, ...call })),
      ],
      stopReason: 'tool_use',
      usage: options.usage ?? { inputTokens: 100, outputTokens: 20 },
      ...(options.responseId === undefined ? {} : { responseId: options.responseId }),
    },
  }
}

/** A response with text only. */
export function says(text: string, options: Omit<ResponseOptions, 'text'> = {}): Scenario {
  return {
    response: {
      blocks: [{ type: 'text', text }],
      stopReason: 'end_turn',
      usage: options.usage ?? { inputTokens: 150, outputTokens: 10 },
      ...(options.responseId === undefined ? {} : { responseId: options.responseId }),
    },
  }
}

/** An HTTP error instead of a response. */
export function fails(kind: ScenarioError['kind'], message = 'the fake provider fails on purpose'): Scenario {
  return { httpError: { kind, message } }
}

/** A response that starts and then stalls until the client lets go. */
export function stalls(text: string): Scenario {
  return {
    response: { blocks: [{ type: 'text', text }], stopReason: 'end_turn', deltaSize: 4 },
    delivery: { pauseBeforeFrame: 2, pauseMs: Number.POSITIVE_INFINITY, heartbeatMs: 50 },
  }
}
