// A support desk of several agents in one session: triage (Claude) hands the customer over to
// billing (OpenAI), which asks a researcher (Gemini) as a tool. Offline: each real adapter talks
// to a loopback fake provider. Everything is stored in SQLite; `--continue` picks the last
// conversation up again, in a new process, with the agent that answered last.
//
//   node src/support-desk.mjs [--data <folder>] [--continue] [message…]
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { SqlitePersister } from '@agentx/persister-sqlite'
import { startOfflineModels } from './offline-models.mjs'
import { createSupportAgent, LABELS } from './support-agent.mjs'

const FIRST_MESSAGE = 'I was charged twice for invoice INV-1042. Can I get my money back?'
const NEXT_MESSAGE = 'When will I see the money?'

const { values, positionals } = parseArgs({
  options: {
    data: { type: 'string', default: '.agentx' },
    continue: { type: 'boolean', default: false },
  },
  allowPositionals: true,
})
const folder = resolve(values.data)
mkdirSync(folder, { recursive: true })
const filename = join(folder, 'support-desk.db')

const models = await startOfflineModels()
const persister = new SqlitePersister({ filename })
const agent = createSupportAgent({
  triage: models.claude.adapter,
  billing: models.openai.adapter,
  researcher: models.gemini.adapter,
  persister,
})
let exitCode = 0

try {
  await agent.initialize()
  console.log(
    'agents: triage (Claude) hands over to billing (OpenAI), which asks researcher (Gemini) as a tool',
  )
  let session
  let activeAgent = 'default'
  if (values.continue) {
    // The newest conversation. Child sessions (the researcher's) are left out of listSessions
    // unless `includeChildren: true`.
    const [latest] = await persister.listSessions({ limit: 1 })
    session = latest === undefined ? undefined : await agent.getSession(latest.id)
    if (latest === undefined || session === undefined) {
      throw new Error(`Nothing to continue in ${filename}: run once without --continue first.`)
    }
    activeAgent = latest.activeAgent ?? 'default'
    console.log(`session ${session.id} (continued: ${LABELS[activeAgent]} answered last)`)
  } else {
    session = await agent.createSession()
    console.log(`session ${session.id}`)
  }
  show(session)
  const message = positionals.join(' ').trim() || (values.continue ? NEXT_MESSAGE : FIRST_MESSAGE)
  console.log(`you> ${message}`)
  if (values.continue) playNextAnswer(activeAgent)
  else playFirstConversation()
  // No `agent` option: the send runs with the session's active agent (triage in a new session).
  const result = await session.send(message)
  // A send's usage adds up every model request it made, the researcher's (in its child session) included.
  console.log(`(this send: ${result.usage.inputTokens} input and ${result.usage.outputTokens} output tokens)`)
  await showStore(session.id)
} catch (error) {
  console.error(`error: ${error instanceof Error ? error.message : String(error)}`)
  exitCode = 1
} finally {
  await agent.close()
  await persister.close()
  await models.close()
}
process.exitCode = exitCode

/**
 * What the offline models answer in a new conversation (real models would decide this
 * themselves): triage hands over; billing looks the invoice up and asks the researcher, who
 * searches the handbook; billing answers.
 */
function playFirstConversation() {
  models.claude.willCall("That's a billing question: I'm handing you over to our billing team.", {
    name: 'transfer_to_billing',
    input: {},
  })
  models.openai.willCall('', { name: 'lookup_invoice', input: { invoice: 'INV-1042' } })
  models.openai.willCall('', {
    name: 'researcher',
    input: { task: 'What does the handbook say about a customer charged twice for one invoice?' },
  })
  models.gemini.willCall('', { name: 'search_policies', input: { query: 'charged twice, duplicate charge' } })
  models.gemini.willSay(
    '§4.2 Duplicate charges: the extra charge is refunded in full within 5 business days, no reason needed.',
  )
  models.openai.willSay(
    'You were charged twice for INV-1042 (EUR 49.00 on 2025-03-02). Under our policy (§4.2) the extra charge is refunded in full within 5 business days, no questions asked. I have started the refund.',
  )
}

/** What the offline model of the active agent answers when the conversation is continued. */
function playNextAnswer(/** @type {string} */ activeAgent) {
  if (activeAgent === 'billing') {
    models.openai.willSay('The refund of EUR 49.00 is on its way: you will see it within 5 business days.')
  } else {
    models.claude.willSay('Is there anything else I can help you with?')
  }
}

/**
 * Prints what the agents do: their messages, their tool calls, handoffs, and the researcher's
 * work inside its child session (`subagent` events), indented.
 *
 * @param {import('@agentx/core').Session} session
 */
function show(session) {
  /** @type {Map<string, string>} tool-call id → tool name */
  const calls = new Map()
  /**
   * @param {import('@agentx/core').SessionEvent} event
   * @param {string} indent
   */
  const print = (event, indent) => {
    if (event.type === 'message' && event.message.type === 'agent') {
      const label = LABELS[event.message.agentName ?? 'default'] ?? event.message.agentName
      const content = typeof event.message.content === 'string' ? [] : event.message.content
      const text = typeof event.message.content === 'string' ? event.message.content : textOf(content)
      if (text !== '') console.log(`${indent}${label}> ${text}`)
      for (const block of content) {
        if (block.type !== 'tool_use') continue
        calls.set(block.id, block.name)
        if (!block.name.startsWith('transfer_to_')) {
          console.log(`${indent}  [${label} calls ${block.name}] ${JSON.stringify(block.input)}`)
        }
      }
    } else if (event.type === 'tool-result') {
      const name = calls.get(event.toolUseId) ?? 'tool'
      if (!name.startsWith('transfer_to_') && name !== 'researcher') {
        const text = typeof event.content === 'string' ? event.content : textOf(event.content)
        console.log(`${indent}  [${name}] ${text.split('\n')[0]}`)
      }
    } else if (event.type === 'handoff') {
      console.log(`${indent}[handoff] ${LABELS[event.from] ?? event.from} → ${LABELS[event.to] ?? event.to}`)
    } else if (event.type === 'subagent') {
      print(event.event, `${indent}    `)
    }
  }
  session.subscribe((event) => print(event, ''))
}

/**
 * Lists what the store holds for the conversation: the session (with its active agent) and the
 * child sessions its agent tools ran.
 *
 * @param {string} sessionId
 */
async function showStore(sessionId) {
  console.log(`\nstored in ${filename}:`)
  const sessions = await persister.listSessions({ includeChildren: true })
  for (const data of sessions) {
    if (data.id !== sessionId) continue
    const messages = await persister.getMessages(data.id)
    console.log(
      `  session ${data.id}: ${messages.length} messages, active agent ${LABELS[data.activeAgent ?? 'default']}`,
    )
  }
  for (const data of sessions) {
    if (data.parentSessionId !== sessionId) continue
    const messages = await persister.getMessages(data.id)
    console.log(
      `  child session ${data.id}: ${messages.length} messages (${LABELS[data.activeAgent ?? ''] ?? data.activeAgent} for call ${data.parentToolUseId})`,
    )
  }
  console.log('Run it again with --continue to go on with the agent that answered last.')
}

/** @param {import('@agentx/core').ContentBlock[]} content */
function textOf(content) {
  return content.map((block) => (block.type === 'text' ? block.text : '')).join('')
}
