// The example script itself, run as a user runs it: a child process whose stdin is written to
// like a terminal (a pipe, and a real pseudo-terminal through script(1)), checked on its stdout
// and on the SQLite file it leaves.
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { jsonLines, temporaryFolder } from './helpers/files.js'
import { killAll, type NodeProcess, startNode, startProcess } from './helpers/node-process.js'
import {
  sessionIdsIn,
  storedMessages,
  storedSession,
  toolResultsOf,
  toolUsesOf,
} from './helpers/read-store.js'

const EXAMPLE = fileURLToPath(new URL('../src/approvals.mjs', import.meta.url))
const QUESTION = 'Approve deploy(service: web, version: 2.4.1, environment: production)? [y/n] '
const INPUT = { service: 'web', version: '2.4.1', environment: 'production' }

let folder: ReturnType<typeof temporaryFolder>
let db: string
let deployLog: string

beforeEach(() => {
  folder = temporaryFolder('example')
  db = join(folder.path, 'approvals.db')
  deployLog = join(folder.path, 'deployments.log')
})
afterEach(async () => {
  await killAll()
  folder.remove()
})

function runExample(...request: string[]): NodeProcess {
  return startNode([EXAMPLE, '--data', folder.path, ...request])
}

/** The one session stored in `state`. */
function onlySession(state: string): string {
  const ids = sessionIdsIn(db, state)
  expect(ids).toHaveLength(1)
  return ids[0]!
}

describe('the example in a terminal (stdin written to like a user types)', () => {
  it('y at the prompt: the deploy runs once; stdout is the conversation; the store holds user, agent(tool_use), tool, agent', async () => {
    const example = runExample()
    await example.waitFor(QUESTION)
    // While it asks, the question is already on disk and nothing ran.
    const sessionId = onlySession('waiting_input')
    expect(storedMessages(db, sessionId).map((m) => m.type)).toEqual(['user', 'agent'])
    expect(jsonLines(deployLog)).toEqual([])

    example.write('y\n')
    expect(await example.exited).toEqual({ code: 0, signal: null })
    expect(example.output()).toBe(
      [
        'you> Deploy web 2.4.1 to production',
        "claude> I'll deploy web 2.4.1 to production.",
        '(The question is stored: stop the process now and run it again to answer later.)',
        `${QUESTION}y`,
        '[deploy] Deployed web 2.4.1 to production.',
        'claude> Done: Deployed web 2.4.1 to production.',
        `session ${sessionId} is idle.`,
        '',
      ].join('\n'),
    )
    expect(example.errors()).toBe('')

    const stored = storedMessages(db, sessionId)
    expect(stored.map((m) => m.type)).toEqual(['user', 'agent', 'tool', 'agent'])
    const [call] = toolUsesOf(stored[1])
    expect(call).toMatchObject({ name: 'deploy', input: INPUT })
    expect(toolResultsOf(stored[2])).toEqual([
      {
        type: 'tool_result',
        toolUseId: call!.id,
        content: [{ type: 'text', text: 'Deployed web 2.4.1 to production.' }],
      },
    ])
    expect(jsonLines(deployLog)).toEqual([{ ...INPUT, sessionId, toolCallId: call!.id }])
    expect(storedSession(db, sessionId)?.state).toBe('idle')
  })

  it('n and a reason: nothing is deployed and the stored tool result (what the model is sent) gives the reason; another answer than y/n is asked again', async () => {
    const example = runExample('Deploy api 3.0.0 to production')
    await example.waitFor('? [y/n] ')
    example.write('perhaps\n')
    await example.waitFor('Please answer y or n.')
    await example.waitFor('? [y/n] ', 2)
    example.write('n\n')
    await example.waitFor('Why not? (optional) ')
    example.write('not on a Friday\n')
    expect(await example.exited).toEqual({ code: 0, signal: null })
    expect(example.output()).toContain(
      [
        'Approve deploy(service: api, version: 3.0.0, environment: production)? [y/n] perhaps',
        'Please answer y or n.',
        'Approve deploy(service: api, version: 3.0.0, environment: production)? [y/n] n',
        'Why not? (optional) not on a Friday',
        '[deploy] The user denied this tool call: not on a Friday',
        'claude> OK, I did not deploy. (The user denied this tool call: not on a Friday)',
      ].join('\n'),
    )

    const sessionId = onlySession('idle')
    const stored = storedMessages(db, sessionId)
    expect(stored.map((m) => m.type)).toEqual(['user', 'agent', 'tool', 'agent'])
    expect(toolResultsOf(stored[2])).toEqual([
      {
        type: 'tool_result',
        toolUseId: toolUsesOf(stored[1])[0]!.id,
        content: [{ type: 'text', text: 'The user denied this tool call: not on a Friday' }],
        isError: true,
      },
    ])
    expect(jsonLines(deployLog)).toEqual([])
  })

  it('killed at the prompt (SIGKILL) and started again: it lists the waiting session, asks the same question, and y deploys once', async () => {
    const first = runExample()
    await first.waitFor(QUESTION)
    expect((await first.kill('SIGKILL')).signal).toBe('SIGKILL')
    const sessionId = onlySession('waiting_input')
    const [call] = toolUsesOf(storedMessages(db, sessionId)[1])

    const second = runExample()
    await second.waitFor(QUESTION)
    expect(second.output()).toBe(
      [
        `1 session(s) waiting for your answer (${db}).`,
        '',
        `session ${sessionId}: "Deploy web 2.4.1 to production"`,
        '(The question is stored: stop the process now and run it again to answer later.)',
        QUESTION,
      ].join('\n'),
    )
    second.write('y\n')
    expect(await second.exited).toEqual({ code: 0, signal: null })
    expect(second.output()).toContain('[deploy] Deployed web 2.4.1 to production.')
    expect(second.output()).toContain(`session ${sessionId} is idle.`)

    // The call asked about before the kill is the one that ran, once.
    expect(jsonLines(deployLog)).toEqual([{ ...INPUT, sessionId, toolCallId: call!.id }])
    const stored = storedMessages(db, sessionId)
    expect(stored.map((m) => m.type)).toEqual(['user', 'agent', 'tool', 'agent'])
    expect(toolResultsOf(stored[2]).map((result) => result.toolUseId)).toEqual([call!.id])
    expect(storedSession(db, sessionId)?.state).toBe('idle')

    // A third start finds nothing waiting and starts a new request.
    const third = runExample()
    await third.waitFor(QUESTION)
    expect(third.output()).toMatch(/^you> Deploy web 2\.4\.1 to production\n/)
    await third.kill('SIGKILL')
  })

  it('input that ends at the prompt leaves the session waiting_input; the process exits 0 and says so', async () => {
    const example = runExample()
    await example.waitFor(QUESTION)
    example.endInput()
    expect(await example.exited).toEqual({ code: 0, signal: null })
    expect(example.output()).toContain('No answer given: the session is still waiting.')
    const sessionId = onlySession('waiting_input')
    expect(storedMessages(db, sessionId).map((m) => m.type)).toEqual(['user', 'agent'])
    expect(jsonLines(deployLog)).toEqual([])
  })

  it('a staging deploy needs no approval (needsApproval is a function of the input): it runs at once, nothing is asked', async () => {
    const example = runExample('Deploy web 1.2.3 to staging')
    example.endInput()
    expect(await example.exited).toEqual({ code: 0, signal: null })
    expect(example.output()).not.toContain('[y/n]')
    expect(example.output()).toContain('claude> Done: Deployed web 1.2.3 to staging.')
    const sessionId = onlySession('idle')
    expect(storedMessages(db, sessionId).map((m) => m.type)).toEqual(['user', 'agent', 'tool', 'agent'])
    expect(jsonLines(deployLog)).toMatchObject([{ service: 'web', version: '1.2.3', environment: 'staging' }])
  })
})

/** The example under a pseudo-terminal: script(1) from util-linux (Linux) or BSD (macOS). */
function runInTerminal(): NodeProcess {
  const command = [process.execPath, EXAMPLE, '--data', folder.path].map((part) => `'${part}'`).join(' ')
  return process.platform === 'darwin'
    ? startProcess('script', ['-q', '/dev/null', 'sh', '-c', command])
    : startProcess('script', ['-qec', command, '/dev/null'])
}

describe('the example in a real terminal (a pseudo-terminal)', () => {
  it('Enter after y deploys once', async () => {
    const terminal = runInTerminal()
    await terminal.waitFor('[y/n] ')
    terminal.write('y\r')
    await terminal.waitFor(' is idle.')
    terminal.endInput()
    await terminal.exited
    expect(terminal.output()).toContain('[deploy] Deployed web 2.4.1 to production.')
    // readline ran in terminal mode (it positions the cursor), so stdin was a TTY.
    expect(terminal.output()).toContain('\u001b[')
    const sessionId = onlySession('idle')
    expect(storedMessages(db, sessionId).map((m) => m.type)).toEqual(['user', 'agent', 'tool', 'agent'])
    expect(jsonLines(deployLog)).toHaveLength(1)
  })

  it('Ctrl-C at the prompt stops asking: the session stays waiting_input and the next start asks again', async () => {
    const terminal = runInTerminal()
    await terminal.waitFor('[y/n] ')
    terminal.write('\u0003')
    await terminal.waitFor('No answer given: the session is still waiting.')
    terminal.endInput()
    await terminal.exited
    const sessionId = onlySession('waiting_input')
    expect(storedMessages(db, sessionId).map((m) => m.type)).toEqual(['user', 'agent'])
    expect(jsonLines(deployLog)).toEqual([])

    const again = runInTerminal()
    await again.waitFor('1 session(s) waiting for your answer')
    await again.waitFor('[y/n] ')
    again.write('y\r')
    await again.waitFor(`session ${sessionId} is idle.`)
    again.endInput()
    await again.exited
    expect(jsonLines(deployLog)).toHaveLength(1)
  })
})
