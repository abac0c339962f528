// Two agent processes up at the same time on one SQLite file (DESIGN §10.6 leases): the second
// answers the session the first is waiting on; the first sees the second's messages when it sends
// again; the tool never runs twice.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AgentProcess, type Files } from './helpers/agent-process.js'
import { filesIn, jsonLines, temporaryFolder } from './helpers/files.js'
import { killAll } from './helpers/node-process.js'
import { storedMessages, storedSession, toolResultsOf, toolUsesOf } from './helpers/read-store.js'
import { callsTools, says } from './helpers/scenarios.js'

const REQUEST = 'Deploy web 2.4.1 to production'
const INPUT = { service: 'web', version: '2.4.1', environment: 'production' }
const CALL = { id: 'toolu_two_1', name: 'deploy', input: INPUT }
const APPROVE = [{ type: 'tool_approval', toolUseId: CALL.id, approved: true }]

let folder: ReturnType<typeof temporaryFolder>
let files: Files

beforeEach(() => {
  folder = temporaryFolder('two-processes')
  files = filesIn(folder.path)
})
afterEach(async () => {
  await killAll()
  folder.remove()
})

/** Process `first` asks and waits; resolves to the session id. */
async function ask(first: AgentProcess): Promise<string> {
  const asked = await first.send(REQUEST, { replies: [callsTools([CALL], { text: 'Deploying.' })] })
  if (!asked.ok) throw new Error(asked.error.message)
  expect(asked.state).toBe('waiting_input')
  return asked.sessionId
}

describe('a second process answers while the first is still up', () => {
  it('the second finds the call pending and answers it; the tool runs once, there; the first, sending later, sees the second’s messages', async () => {
    const [first, second] = await Promise.all([AgentProcess.start(files), AgentProcess.start(files)])
    expect(first.pid).not.toBe(second.pid)
    const sessionId = await ask(first)

    expect(await second.pending(sessionId)).toEqual({
      id: expect.any(Number),
      ok: true,
      state: 'waiting_input',
      pending: [{ toolUseId: CALL.id, name: 'deploy', input: INPUT, kind: 'approval', sessionId }],
    })
    const answered = await second.send(APPROVE, {
      sessionId,
      replies: [says('Deployed, answered from the second process.')],
    })
    expect(answered).toMatchObject({
      ok: true,
      state: 'idle',
      text: 'Deployed, answered from the second process.',
    })

    // The tool ran once, in the second process.
    expect(jsonLines(files.runsLog)).toEqual([
      { pid: second.pid, at: 'start', id: CALL.id },
      { pid: second.pid, at: 'end', id: CALL.id },
    ])
    expect(jsonLines(files.deployLog)).toEqual([{ ...INPUT, sessionId, toolCallId: CALL.id }])
    expect(storedMessages(files.db, sessionId).map((m) => m.type)).toEqual(['user', 'agent', 'tool', 'agent'])
    expect(storedSession(files.db, sessionId)).toMatchObject({ state: 'idle', leaseOwner: null })

    // The first process, still up, sends again: the model sees what the second process stored.
    const later = await first.send('Thanks! Anything else?', {
      sessionId,
      replies: [says('No, all done.')],
    })
    if (!later.ok) throw new Error(later.error.message)
    expect(later.text).toBe('No, all done.')
    expect(later.requests).toHaveLength(1)
    const seen = later.requests[0]!.messages
    expect(seen.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user'])
    expect(seen[1]!.content).toContainEqual({ type: 'tool_use', ...CALL })
    expect(seen[2]!.content).toEqual([expect.objectContaining({ type: 'tool_result', toolUseId: CALL.id })])
    expect(seen[3]!.content).toEqual([{ type: 'text', text: 'Deployed, answered from the second process.' }])
    expect(seen[4]!.content).toEqual([{ type: 'text', text: 'Thanks! Anything else?' }])

    const stored = storedMessages(files.db, sessionId)
    expect(stored.map((m) => [m.seq, m.type])).toEqual([
      [0, 'user'],
      [1, 'agent'],
      [2, 'tool'],
      [3, 'agent'],
      [4, 'user'],
      [5, 'agent'],
    ])
    expect(toolResultsOf(stored[2])).toEqual([
      {
        type: 'tool_result',
        toolUseId: CALL.id,
        content: [{ type: 'text', text: 'Deployed web 2.4.1 to production.' }],
      },
    ])
    // The "replied instead" closing of the call was not written: the first process knew it was answered.
    expect(stored.filter((m) => m.type === 'tool')).toHaveLength(1)
    expect(jsonLines(files.deployLog)).toHaveLength(1)
    await Promise.all([first.close(), second.close()])
  })

  it('a late answer from the first process, after the second answered, is refused and writes nothing', async () => {
    const [first, second] = await Promise.all([AgentProcess.start(files), AgentProcess.start(files)])
    const sessionId = await ask(first)
    const answered = await second.send(APPROVE, { sessionId, replies: [says('Deployed.')] })
    expect(answered.ok).toBe(true)

    const late = await first.send(APPROVE, { sessionId, replies: [says('Deployed twice?')] })
    expect(late).toMatchObject({ ok: false, error: { name: 'ValidationError', code: 'VALIDATION' } })
    expect(jsonLines(files.deployLog)).toHaveLength(1)
    expect(storedMessages(files.db, sessionId).map((m) => m.type)).toEqual(['user', 'agent', 'tool', 'agent'])
    expect(storedSession(files.db, sessionId)?.state).toBe('idle')
    await Promise.all([first.close(), second.close()])
  })

  it('both processes answer at the same moment: one runs the batch (the lease), the other is refused; the tool runs once, one tool message', async () => {
    // A slow tool keeps the winner's send (and its lease) open while the other answer arrives.
    const [first, second] = await Promise.all([
      AgentProcess.start(files, { toolDelayMs: 1_000 }),
      AgentProcess.start(files, { toolDelayMs: 1_000 }),
    ])
    const sessionId = await ask(first)
    const [fromFirst, fromSecond] = await Promise.all([
      first.send(APPROVE, { sessionId, replies: [says('Deployed by the first.')] }),
      second.send(APPROVE, { sessionId, replies: [says('Deployed by the second.')] }),
    ])
    const outcomes = [fromFirst, fromSecond]
    expect(outcomes.filter((outcome) => outcome.ok)).toHaveLength(1)
    const refused = outcomes.find((outcome) => !outcome.ok)
    // Refused while the winner holds the lease (busy), or after it finished (nothing pending).
    expect(['SessionBusyError', 'ValidationError']).toContain(refused?.ok === false && refused.error.name)

    const runs = jsonLines(files.runsLog)
    expect(runs.map((run) => run.at)).toEqual(['start', 'end'])
    expect(jsonLines(files.deployLog)).toHaveLength(1)
    const stored = storedMessages(files.db, sessionId)
    expect(stored.map((m) => m.type)).toEqual(['user', 'agent', 'tool', 'agent'])
    expect(toolUsesOf(stored[1]).map((call) => call.id)).toEqual([CALL.id])
    const winner = fromFirst.ok ? first : second
    expect(runs[0]!.pid).toBe(winner.pid)
    expect(stored[3]!.content).toEqual([
      { type: 'text', text: winner === first ? 'Deployed by the first.' : 'Deployed by the second.' },
    ])
    expect(storedSession(files.db, sessionId)).toMatchObject({ state: 'idle', leaseOwner: null })
    await Promise.all([first.close(), second.close()])
  })
})
