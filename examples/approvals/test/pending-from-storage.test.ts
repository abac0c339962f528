// getPending() derives the pending calls from storage (DESIGN §10.1): it sees what another
// process stored, and it still offers calls whose session a crash left `interrupted`.
import { createClaudeAdapter } from '@agentx/adapter-claude'
import { anthropicMessagesDialect, startFakeProvider } from '@agentx/contract-tests'
import { createAgent } from '@agentx/core'
import { SqlitePersister } from '@agentx/persister-sqlite'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createDeployTool } from '../src/deploy-tool.mjs'
import { AgentProcess, type Files } from './helpers/agent-process.js'
import { filesIn, jsonLines, temporaryFolder } from './helpers/files.js'
import { killAll } from './helpers/node-process.js'
import { storedMessages, storedSession } from './helpers/read-store.js'
import { callsTools, says } from './helpers/scenarios.js'

const INPUT = { service: 'web', version: '2.4.1', environment: 'production' }
const CALL = { id: 'toolu_gap_1', name: 'deploy', input: INPUT }

let folder: ReturnType<typeof temporaryFolder>
let files: Files

beforeEach(() => {
  folder = temporaryFolder('kernel-gaps')
  files = filesIn(folder.path)
})
afterEach(async () => {
  await killAll()
  folder.remove()
})

describe('getPending() derives the pending calls from storage', () => {
  it('in a process that is still up, after another process answered the call, it returns []', async () => {
    const [first, second] = await Promise.all([AgentProcess.start(files), AgentProcess.start(files)])
    const asked = await first.send('Deploy web 2.4.1 to production', { replies: [callsTools([CALL])] })
    if (!asked.ok) throw new Error(asked.error.message)
    const answered = await second.send([{ type: 'tool_approval', toolUseId: CALL.id, approved: true }], {
      sessionId: asked.sessionId,
      replies: [says('Deployed.')],
    })
    expect(answered.ok).toBe(true)
    expect(storedSession(files.db, asked.sessionId)?.state).toBe('idle')

    const seenByFirst = await first.pending(asked.sessionId)
    expect(seenByFirst).toMatchObject({ ok: true, pending: [] })
    await Promise.all([first.close(), second.close()])
  })

  it('after a crash between storing the calls and saving the session as waiting_input, a restarted process still offers them', async () => {
    const first = await AgentProcess.start(files, { crashWhenWaiting: true, leaseTtlMs: 300 })
    await expect(
      first.send('Deploy web 2.4.1 to production', { replies: [callsTools([CALL])] }),
    ).rejects.toThrow(/exited/)
    expect((await first.process.exited).signal).toBe('SIGKILL')
    expect(jsonLines(files.runsLog)).toEqual([])

    // Let the dead process's lease expire, then start again in this process.
    await new Promise((resolve) => setTimeout(resolve, 500))
    const provider = await startFakeProvider({ dialect: anthropicMessagesDialect })
    const persister = new SqlitePersister({ filename: files.db })
    const agent = createAgent(
      { model: 'claude-sonnet-5-5', tools: [createDeployTool(files.deployLog)], durability: 'sync' },
      { adapter: createClaudeAdapter({ apiKey: 'offline-test-key', baseURL: provider.baseURL }), persister },
    )
    try {
      await agent.initialize()
      const [data] = await persister.listSessions({})
      // On disk: the agent message with the call is durable; the session was never saved as waiting.
      expect(storedMessages(files.db, data!.id).map((m) => m.type)).toEqual(['user', 'agent'])
      expect(storedSession(files.db, data!.id)?.state).toBe('interrupted')
      const session = (await agent.getSession(data!.id))!
      expect(await session.getPending()).toEqual([
        { toolUseId: CALL.id, name: 'deploy', input: INPUT, kind: 'approval', sessionId: data!.id },
      ])
      provider.enqueue(says('Deployed.'))
      await session.send([{ type: 'tool_approval', toolUseId: CALL.id, approved: true }])
      expect(jsonLines(files.deployLog)).toHaveLength(1)
    } finally {
      await agent.close()
      await persister.close()
      await provider.close()
    }
  })
})
