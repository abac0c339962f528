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

/** Input of the demo {@link createDemoHumanTools} `deploy_service` tool. */
export interface DeployInput {
  service: string
  environment: string
}

/** Input of the demo {@link createDemoHumanTools} `ask_user` tool. */
export interface AskUserInput {
  question: string
}

/**
 * The demo agent's tools that involve the person at the keyboard (DESIGN §10.1):
 * `deploy_service` needs an approval before it runs (it only pretends to deploy), and `ask_user`
 * is a client tool — it has no `execute`, the browser answers it with what the user typed.
 */
export function createDemoHumanTools(): Tool[] {
  const deploy: Tool<DeployInput> = {
    name: 'deploy_service',
    description: 'Deploys a service to an environment. Needs the user’s approval.',
    inputSchema: {
      type: 'object',
      properties: {
        service: { type: 'string' },
        environment: { type: 'string', enum: ['staging', 'production'] },
      },
      required: ['service', 'environment'],
      additionalProperties: false,
    },
    needsApproval: true,
    execute(input) {
      const service = typeof input?.service === 'string' ? input.service : 'service'
      const environment = typeof input?.environment === 'string' ? input.environment : 'staging'
      return { deployed: true, service, environment, version: '1.4.2' }
    },
  }
  const askUser: Tool<AskUserInput> = {
    name: 'ask_user',
    description: 'Asks the user a question and waits for the answer.',
    inputSchema: {
      type: 'object',
      properties: { question: { type: 'string' } },
      required: ['question'],
      additionalProperties: false,
    },
  }
  return [deploy as Tool, askUser as Tool]
}
