import type { Tool } from '@agentx/core'
import { evaluateArithmetic } from './evaluate-arithmetic.js'

/** Input of the demo {@link createDemoTools} `calculator` tool. */
export interface CalculatorInput {
  expression: string
}

/** Input of the demo {@link createDemoTools} `get_time` tool. */
export interface GetTimeInput {
  /** An IANA time zone such as `Europe/Paris`. Default is `UTC`. */
  timeZone?: string
}

/**
 * The tools of the playground's demo agent: `get_time` (the current time in a time zone) and
 * `calculator` (arithmetic without `eval`). The demo adapter calls them when a message asks for the
 * time or contains a calculation, so tool calls and results can be tried without a model.
 *
 * @param now - The clock. Default is `() => new Date()`.
 */
export function createDemoTools(now: () => Date = () => new Date()): Tool[] {
  const getTime: Tool<GetTimeInput> = {
    name: 'get_time',
    description: 'Returns the current date and time in a time zone.',
    inputSchema: {
      type: 'object',
      properties: {
        timeZone: { type: 'string', description: 'An IANA time zone, e.g. Europe/Paris. Default UTC.' },
      },
      additionalProperties: false,
    },
    execute(input) {
      const timeZone = typeof input?.timeZone === 'string' && input.timeZone !== '' ? input.timeZone : 'UTC'
      const date = now()
      let local: string
      try {
        local = new Intl.DateTimeFormat('en-GB', { timeZone, dateStyle: 'full', timeStyle: 'long' }).format(
          date,
        )
      } catch {
        throw new Error(`Unknown time zone "${timeZone}".`)
      }
      return { iso: date.toISOString(), timeZone, local }
    },
  }
  const calculator: Tool<CalculatorInput> = {
    name: 'calculator',
    description: 'Evaluates an arithmetic expression with + - * / % ^ and parentheses.',
    inputSchema: {
      type: 'object',
      properties: { expression: { type: 'string', description: 'For example "12 * (3 + 4)".' } },
      required: ['expression'],
      additionalProperties: false,
    },
    execute(input) {
      if (typeof input?.expression !== 'string') throw new Error('calculator needs a string "expression".')
      return { expression: input.expression, result: evaluateArithmetic(input.expression) }
    },
  }
  return [getTime as Tool, calculator as Tool]
}
