// The support desk: three profiles of one agent, sharing one conversation per session.
//
//   triage (the top-level profile, `default`, on Claude) talks to the customer first and hands the
//     conversation over to billing with its `transfer_to_billing` tool;
//   billing (OpenAI) looks invoices up and asks the researcher about policies before it promises
//     anything: `agentTool('researcher')` runs the researcher in a child session;
//   researcher (Gemini) answers from the policy handbook only; it sees its task, not the
//     customer's conversation.
import { agentTool, createAgent } from '@agentx/core'
import { lookupInvoice, searchPolicies } from './support-tools.mjs'

/** How the example names the profiles on screen (`default` is the triage desk). */
export const LABELS = /** @type {Record<string, string>} */ ({
  default: 'triage',
  billing: 'billing',
  researcher: 'researcher',
})

/**
 * @param {{
 *   triage: import('@agentx/core').AgentAdapter,
 *   billing: import('@agentx/core').AgentAdapter,
 *   researcher: import('@agentx/core').AgentAdapter,
 *   persister: import('@agentx/core').AgentPersister,
 * }} deps
 */
export function createSupportAgent({ triage, billing, researcher, persister }) {
  return createAgent(
    {
      // The top-level config is the triage profile.
      model: 'claude-sonnet-5-5',
      systemPrompt:
        'You are the front desk of Acme support. Find out what the customer needs and hand the conversation to the right specialist.',
      // Every message is durable before it is shown.
      durability: 'sync',
      agents: {
        default: { description: 'The front desk: greets customers and routes them.', handoffs: ['billing'] },
        billing: {
          description: 'Invoices, charges and refunds.',
          adapter: billing,
          model: 'gpt-5.5',
          systemPrompt:
            'You handle invoices and refunds. Look the invoice up, and ask the researcher what the policy says before you promise anything.',
          tools: [lookupInvoice, agentTool('researcher')],
          handoffs: ['default'],
        },
        researcher: {
          description: 'Finds what the support policy handbook says about a question, with the section.',
          adapter: researcher,
          model: 'gemini-3-flash',
          systemPrompt: 'You answer from the policy handbook only, and cite the section.',
          tools: [searchPolicies],
        },
      },
    },
    { adapter: triage, persister },
  )
}
