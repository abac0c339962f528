// Two application processes on one SQLite file and one session (the storage issue's observed
// failures): nothing is lost in either durability mode, a busy session fails fast and recovers,
// and a second process starting up never interrupts a live send of the first.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAgent } from '@agentx/core'
import { ScriptedAdapter, textTurn } from '@agentx/core/testing'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createSqlitePersister } from './index.js'
import { finishChild, killHard, nextLine, runChild, startChild } from '../test/child-process.js'

let folder: string
let filename: string

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'agentx-two-processes-'))
  filename = join(folder, 'agent.db')
})
afterEach(() => rmSync(folder, { recursive: true, force: true }))

async function newSession(): Promise<string> {
  const persister = createSqlitePersister({ filename })
  const now = new Date().toISOString()
  await persister.saveSession({
    id: 'shared',
    summary: '',
    createdAt: now,
    lastActivity: now,
    state: 'created',
    tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
  })
  await persister.close()
  return 'shared'
}

interface SendsResult {
  sent: number
  busy: number
  errors: string[]
}

describe('two processes sending to one session', () => {
  for (const durability of ['async', 'sync'] as const) {
    it(`${durability}: every send of both processes is stored exactly once, in order, with no gap`, async () => {
      const id = await newSession()
      const count = 20
      const children = ['A', 'B'].map((label) =>
        startChild('./agent-worker.mjs', ['sends', filename, id, label, String(count), durability], {
          stdin: true,
        }),
      )
      // Both are set up before either starts sending, so that they really run at the same time.
      await Promise.all(children.map((child) => nextLine(child)))
      const results = children.map((child) => finishChild<SendsResult>(child))
      for (const child of children) child.stdin!.end('go\n')
      const [a, b] = await Promise.all(results)
      expect(a).toMatchObject({ sent: count, errors: [] })
      expect(b).toMatchObject({ sent: count, errors: [] })
      const persister = createSqlitePersister({ filename })
      const stored = await persister.getMessages(id)
      await persister.close()
      // 2 × count exchanges, each a user message followed by its reply; seq 0…n-1.
      expect(stored.map((m) => m.seq)).toEqual([...Array(4 * count).keys()])
      const users = stored.filter((m) => m.type === 'user').map((m) => m.content as string)
      expect(users.sort()).toEqual([...Array(count).keys()].flatMap((i) => [`A ${i}`, `B ${i}`]).sort())
      for (let i = 0; i < stored.length; i += 2) {
        expect(stored[i]!.type).toBe('user')
        const label = (stored[i]!.content as string).split(' ')[0]
        expect(stored[i + 1]).toMatchObject({ type: 'agent' })
        expect(JSON.stringify(stored[i + 1]!.content)).toContain(`${label} reply`)
      }
      // The processes really did meet: at least one send found the session held by the other.
      expect(a!.busy + b!.busy).toBeGreaterThan(0)
    }, 120_000)
  }
})

describe('a second process starting up', () => {
  it('never marks a live send of the first process interrupted; once that process died and its lease expired, it does', async () => {
    const id = await newSession()
    const first = startChild('./agent-worker.mjs', ['long', filename, id, '1500'])
    try {
      await nextLine(first)
      await runChild('./agent-worker.mjs', ['start', filename])
      const persister = createSqlitePersister({ filename })
      expect((await persister.getSession(id))?.state).toBe('active')
      await persister.close()
    } finally {
      await killHard(first)
    }
    await new Promise((resolve) => setTimeout(resolve, 1_800))
    await runChild('./agent-worker.mjs', ['start', filename])
    const after = createSqlitePersister({ filename })
    expect((await after.getSession(id))?.state).toBe('interrupted')
    // The user message of the killed send was kept.
    expect((await after.getMessages(id)).map((m) => m.content)).toContain('a long task')
    await after.close()
  }, 60_000)
})

describe('a process that keeps running while another dies', () => {
  it("marks the dead process's send `interrupted` once its lease has run out, with no restart and no retry", async () => {
    const id = await newSession()
    const first = startChild('./agent-worker.mjs', ['long', filename, id, '1000'])
    let watcher: ReturnType<typeof startChild> | undefined
    try {
      await nextLine(first)
      watcher = startChild('./agent-worker.mjs', ['watch', filename, '300'])
      await nextLine(watcher)
      const persister = createSqlitePersister({ filename })
      try {
        // The lease of the first process is live: the watcher's initialize() left the send alone.
        expect((await persister.getSession(id))?.state).toBe('active')
        await killHard(first)
        // Before, the session stayed `active` in the store until another process started or retried it.
        const deadline = Date.now() + 15_000
        while ((await persister.getSession(id))?.state === 'active' && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
        expect((await persister.getSession(id))?.state).toBe('interrupted')
        expect((await persister.getMessages(id)).map((m) => m.content)).toContain('a long task')
      } finally {
        await persister.close()
      }
    } finally {
      await killHard(first)
      if (watcher) await killHard(watcher)
    }
  }, 60_000)
})

describe('a session deleted by another process', () => {
  it('is not deleted while another process sends in it; once deleted, this process never writes it back', async () => {
    const id = await newSession()
    const first = startChild('./agent-worker.mjs', ['long', filename, id, '1500'])
    try {
      await nextLine(first)
      expect(await runChild('./agent-worker.mjs', ['delete', filename, id])).toEqual({
        error: 'SESSION_BUSY',
      })
      const persister = createSqlitePersister({ filename })
      expect((await persister.getMessages(id)).map((m) => m.content)).toEqual(['a long task'])
      await persister.close()
    } finally {
      await killHard(first)
    }
    // This process holds the session object while a third one deletes it (once the lease expired).
    const persister = createSqlitePersister({ filename })
    const agent = createAgent({}, { adapter: new ScriptedAdapter([textTurn('never')]), persister })
    const session = (await agent.getSession(id))!
    await new Promise((resolve) => setTimeout(resolve, 1_800))
    expect(await runChild('./agent-worker.mjs', ['delete', filename, id])).toEqual({ deleted: true })
    await expect(session.send('after the delete')).rejects.toMatchObject({
      code: 'SESSION_STATE',
      state: 'deleted',
    })
    await expect(session.update({ summary: 'renamed' })).rejects.toMatchObject({ code: 'SESSION_STATE' })
    expect(session.state).toBe('deleted')
    await agent.close()
    // Before, the failed send stored the session again (state 'error', no messages).
    expect(await persister.getSession(id)).toBeNull()
    expect(await persister.getMessages(id)).toEqual([])
    await persister.close()
  }, 60_000)
})
