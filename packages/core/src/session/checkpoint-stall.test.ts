// A provider that stalls mid-reply: the text streamed so far is checkpointed when the interval is
// up, not only when the next event arrives (DESIGN §3 `checkpointIntervalMs`, §4: a crash loses at
// most a bounded slice of text). The store is read while the send is still waiting, which is what
// a crash at that instant would leave.
import { describe, expect, it } from 'vitest'
import type { AdapterMessage, AgentAdapter } from '../contracts/agent-adapter.js'
import type { AnyMessage } from '../contracts/messages.js'
import { createAgent } from '../agent/create-agent.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const storedReply = async (
  persister: InMemoryPersister,
  sessionId: string,
): Promise<AnyMessage | undefined> => (await persister.getMessages(sessionId)).find((m) => m.type === 'agent')

/** An adapter that yields each delta after its delay, then waits until aborted. */
function slowAdapter(deltas: ReadonlyArray<readonly [delayMs: number, text: string]>): AgentAdapter {
  return {
    getName: () => 'slow',
    async *stream(_prompt, options): AsyncGenerator<AdapterMessage> {
      for (const [delayMs, text] of deltas) {
        await sleep(delayMs)
        yield { type: 'text-delta', text }
      }
      await new Promise((resolve) => options.signal?.addEventListener('abort', resolve, { once: true }))
    },
  }
}

describe('checkpoints while the provider stalls', () => {
  for (const durability of ['async', 'sync'] as const) {
    it(`${durability}: text streamed before a stall is saved one interval later`, async () => {
      const persister = new InMemoryPersister()
      const adapter = new ScriptedAdapter([
        {
          events: [
            { type: 'text-delta', text: 'partial ' },
            { type: 'text-delta', text: 'reply' },
          ],
          waitForAbort: true,
        },
      ])
      const agent = createAgent({ durability, checkpointIntervalMs: 20 }, { adapter, persister })
      const session = await agent.createSession()
      const sent = session.send('hello').catch((error: unknown) => error)
      await sleep(200)
      // Ten intervals into the stall, and the adapter never sent another event.
      const reply = await storedReply(persister, session.id)
      expect(reply).toMatchObject({ incomplete: true, content: [{ type: 'text', text: 'partial reply' }] })
      session.abort()
      expect(await sent).toMatchObject({ kind: 'aborted' })
      await agent.close()
      expect(await storedReply(persister, session.id)).toMatchObject({
        content: [{ type: 'text', text: 'partial reply' }],
        stopReason: 'aborted',
      })
    })
  }

  it('a delta that arrives just after a checkpoint is saved one interval later, with no event after it', async () => {
    const persister = new InMemoryPersister()
    // 'two ' arrives when a checkpoint is due (saved at once); 'three' 10 ms later, then nothing.
    const adapter = slowAdapter([
      [0, 'one '],
      [60, 'two '],
      [10, 'three'],
    ])
    const agent = createAgent({ checkpointIntervalMs: 50 }, { adapter, persister })
    const session = await agent.createSession()
    const sent = session.send('count').catch((error: unknown) => error)
    await sleep(300)
    expect(await storedReply(persister, session.id)).toMatchObject({
      incomplete: true,
      content: [{ type: 'text', text: 'one two three' }],
    })
    session.abort()
    await sent
    await agent.close()
  })

  it('a stalled stream with nothing new writes no further checkpoints', async () => {
    let writes = 0
    const persister = new (class extends InMemoryPersister {
      override async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
        if (message.type === 'agent') writes += 1
        return super.saveMessage(sessionId, message)
      }
    })()
    const adapter = slowAdapter([[0, 'only this']])
    const agent = createAgent({ checkpointIntervalMs: 10 }, { adapter, persister })
    const session = await agent.createSession()
    const sent = session.send('go').catch((error: unknown) => error)
    await sleep(250)
    expect(writes).toBe(1)
    session.abort()
    await sent
    await agent.close()
  })
})
