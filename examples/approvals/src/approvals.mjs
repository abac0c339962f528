// A terminal agent whose production deploys wait for your y/n. The question is stored, not held
// in memory: kill the process at the prompt, run it again, and it asks again.
//
//   node src/approvals.mjs [--data <folder>] [request…]
//
// On start it answers what is waiting (sessions in state `waiting_input`, their calls from
// `session.getPending()`); when nothing waits, it sends the request (default: "Deploy web 2.4.1
// to production"). Everything lives in <folder> (default ./.agentx): approvals.db (SQLite) and
// deployments.log (what the tool did).
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import { createAgent } from '@agentx/core'
import { SqlitePersister } from '@agentx/persister-sqlite'
import { createDeployTool } from './deploy-tool.mjs'
import { planDeploy, startOfflineModel } from './offline-model.mjs'

const { values, positionals } = parseArgs({
  options: { data: { type: 'string', default: '.agentx' } },
  allowPositionals: true,
})
const folder = resolve(values.data)
mkdirSync(folder, { recursive: true })
const filename = join(folder, 'approvals.db')

const model = await startOfflineModel()
const persister = new SqlitePersister({ filename })
const agent = createAgent(
  {
    model: 'claude-sonnet-5-5',
    systemPrompt: 'You deploy services when asked to. Production deploys need the approval of the user.',
    tools: [createDeployTool(join(folder, 'deployments.log'))],
    // Every message is durable before it is shown: killing the process at the prompt loses nothing.
    durability: 'sync',
  },
  { adapter: model.adapter, persister },
)
const terminal = openTerminal()
let exitCode = 0

try {
  // Repairs sessions a crash left `active`; leaves `waiting_input` ones as they are.
  await agent.initialize()
  const waiting = await persister.listSessions({ state: 'waiting_input' })
  if (waiting.length > 0) {
    console.log(`${waiting.length} session(s) waiting for your answer (${filename}).`)
    for (const { id } of waiting) {
      const session = await agent.getSession(id)
      if (session === undefined) continue
      console.log(`\nsession ${session.id}: "${session.summary}"`)
      show(session)
      if (!(await answer(session))) break
    }
  } else {
    const request = positionals.join(' ').trim() || 'Deploy web 2.4.1 to production'
    const session = await agent.createSession({})
    show(session)
    console.log(`you> ${request}`)
    const plan = planDeploy(request)
    model.willCall(`I'll deploy ${plan.service} ${plan.version} to ${plan.environment}.`, {
      name: 'deploy',
      input: plan,
    })
    const result = await session.send(request)
    // A staging deploy ran at once; a production deploy waits for the answer (SendResult.pending).
    if (result.pending !== undefined) await answer(session)
  }
} catch (error) {
  console.error(`error: ${error instanceof Error ? error.message : String(error)}`)
  exitCode = 1
} finally {
  terminal.close()
  await agent.close()
  await persister.close()
  await model.close()
}
process.exitCode = exitCode

/**
 * Asks about every pending call of the session, then sends all the answers at once (the batch
 * runs only when each pending call is answered). Resolves to `false` when input ended first: the
 * session then stays `waiting_input`.
 *
 * @param {import('@agentx/core').Session} session
 * @returns {Promise<boolean>}
 */
async function answer(session) {
  /** @type {import('@agentx/core').ToolApproval[]} */
  const answers = []
  for (const call of await session.getPending()) {
    console.log('(The question is stored: stop the process now and run it again to answer later.)')
    const approved = await terminal.confirm(`Approve ${call.name}(${describe(call.input)})? [y/n] `)
    if (approved === undefined) return leftWaiting()
    if (approved) {
      answers.push({ type: 'tool_approval', toolUseId: call.toolUseId, approved: true })
      continue
    }
    const reason = await terminal.ask('Why not? (optional) ')
    if (reason === undefined) return leftWaiting()
    answers.push({
      type: 'tool_approval',
      toolUseId: call.toolUseId,
      approved: false,
      ...(reason === '' ? {} : { reason }),
    })
  }
  await session.send(answers)
  console.log(`session ${session.id} is ${session.state}.`)
  return true
}

function leftWaiting() {
  console.log('\nNo answer given: the session is still waiting. Run the example again to answer it.')
  return false
}

/**
 * Prints what the session does, and plays the offline model: after a tool result, "Claude" says
 * what happened.
 *
 * @param {import('@agentx/core').Session} session
 */
function show(session) {
  session.subscribe((event) => {
    if (event.type === 'message' && event.message.type === 'agent') {
      console.log(`claude> ${textOf(event.message.content)}`)
    } else if (event.type === 'tool-result') {
      const text = textOf(event.content)
      console.log(`[deploy] ${text}`)
      model.willSay(event.isError ? `OK, I did not deploy. (${text})` : `Done: ${text}`)
    }
  })
}

/** @param {string | import('@agentx/core').ContentBlock[]} content */
function textOf(content) {
  if (typeof content === 'string') return content
  return content.map((block) => (block.type === 'text' ? block.text : '')).join('')
}

/** @param {unknown} input */
function describe(input) {
  if (typeof input !== 'object' || input === null) return JSON.stringify(input)
  return Object.entries(input)
    .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(', ')
}

/** Questions on the terminal (or a pipe); `undefined` once input ends or Ctrl-C is pressed. */
function openTerminal() {
  const lines = createInterface({
    input: process.stdin,
    output: process.stdout,
    terminal: process.stdin.isTTY === true,
  })
  let closed = false
  lines.on('close', () => {
    closed = true
  })
  // Ctrl-C at a prompt: stop asking. Nothing is lost; the question stays stored.
  lines.on('SIGINT', () => lines.close())
  const iterator = lines[Symbol.asyncIterator]()

  /** @param {string} question */
  async function ask(question) {
    // Input that already ended may still hold lines (a pipe): read them, do not prompt on readline.
    if (closed) process.stdout.write(question)
    else {
      lines.setPrompt(question)
      lines.prompt()
    }
    const next = await iterator.next()
    if (next.done) return undefined
    const reply = String(next.value).trim()
    // A terminal echoes what was typed; a pipe does not, so the transcript shows it.
    if (process.stdin.isTTY !== true) process.stdout.write(`${reply}\n`)
    return reply
  }

  return {
    ask,
    /** @param {string} question @returns {Promise<boolean | undefined>} */
    async confirm(question) {
      for (;;) {
        const reply = await ask(question)
        if (reply === undefined) return undefined
        if (/^(y|yes)$/i.test(reply)) return true
        if (/^(n|no)$/i.test(reply)) return false
        console.log('Please answer y or n.')
      }
    },
    close: () => lines.close(),
  }
}
