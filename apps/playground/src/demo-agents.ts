import { type AgentProfile, agentTool, type Tool } from '@agentx/core'
import { createDemoHumanTools, createDemoTools } from './demo-tools.js'

/** The system prompt of the demo's `billing` profile: the demo adapter answers as that persona. */
export const DEMO_BILLING_PROMPT =
  'You are the billing agent of the AgentX demo: invoices, plans and refunds.'

/** The system prompt of the demo's `researcher` profile, run as a sub-agent in a child session. */
export const DEMO_RESEARCHER_PROMPT =
  'You are the researcher sub-agent of the AgentX demo: report three findings.'

/** The demo agent: its tools (the default profile's) and its profiles. */
export interface DemoAgentSetup {
  tools: Tool[]
  agents: Record<string, AgentProfile>
  /** Names of the tools that run a profile in a child session (`agentTool`). */
  agentTools: string[]
}

/**
 * The offline demo's agent, so every capability of DESIGN §10 can be toured without a key: the
 * clock and calculator, a tool that needs approval, a client tool that asks the user, a `billing`
 * profile to hand off to (and back), and a `researcher` profile run as an agent tool.
 */
export function createDemoAgentSetup(): DemoAgentSetup {
  const [getTime, calculator] = createDemoTools()
  return {
    tools: [getTime!, calculator!, ...createDemoHumanTools(), agentTool('researcher')],
    agents: {
      default: { description: 'The demo assistant.', handoffs: ['billing'] },
      billing: {
        description: 'Answers questions about invoices, plans and refunds.',
        systemPrompt: DEMO_BILLING_PROMPT,
        handoffs: ['default'],
      },
      researcher: {
        description: 'Researches a topic and reports three findings.',
        systemPrompt: DEMO_RESEARCHER_PROMPT,
        tools: [calculator!],
      },
    },
    agentTools: ['researcher'],
  }
}
