// SessionHistory's partial state (DESIGN §10.4): a compacted session loads only what the model
// needs — the latest compaction and what follows — while getMessages still serves everything.
import { describe, expect, it } from 'vitest'
import { createAgent } from '../agent/create-agent.js'
import type { GetMessagesQuery, SessionData } from '../contracts/agent-persister.js'
import type { AnyMessage } from '../contracts/messages.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn, usage } from '../testing/stream-helpers.js'
import type { MessagesQuery } from './session-history.js'
import { SessionHistory } from './session-history.js'

const NOW = '2026-01-01T00:00:00.000Z'

/** A store that counts the messages it hands out. */
class CountingPersister extends InMemoryPersister {
  returned = 0
  calls = 0
  override async getMessages(sessionId: string, query?: GetMessagesQuery): Promise<AnyMessage[]> {
    const page = await super.getMessages(sessionId, query)
    this.calls += 1
    this.returned += page.length
    return page
  }
}

/** Stores a session of `count` messages; `compactions` maps a seq to the `throughSeq` of a summary stored there. */
async function seed(persister: InMemoryPersister, count: number, compactions: Record<number, number> = {}) {
  const data: SessionData = {
    id: 's',
    summary: '',
    createdAt: NOW,
    lastActivity: NOW,
    state: 'idle',
    tokenUsage: usage(0, 0),
  }
  await persister.saveSession(data)
  // User and agent messages alternate; a summary sits between them (a reply never follows a reply).
  let turn = 0
  for (let seq = 0; seq < count; seq++) {
    const through = compactions[seq]
    const message: AnyMessage =
      through === undefined
        ? {
            id: `m${seq}`,
            sessionId: 's',
            seq,
            type: turn++ % 2 === 0 ? 'user' : 'agent',
            content: [{ type: 'text', text: `message ${seq}` }],
            timestamp: NOW,
          }
        : {
            id: `m${seq}`,
            sessionId: 's',
            seq,
            type: 'system',
            content: [{ type: 'text', text: `summary through ${through}` }],
            timestamp: NOW,
            compaction: { throughSeq: through },
          }
    await persister.saveMessage('s', message)
  }
}

/** What getMessages(query) means, computed from the whole stored list. */
function expected(all: readonly AnyMessage[], query: MessagesQuery): number[] {
  let list = all.filter(
    (m) =>
      (query.afterSeq === undefined || m.seq > query.afterSeq) &&
      (query.beforeSeq === undefined || m.seq < query.beforeSeq),
  )
  if (query.limit !== undefined) {
    list =
      query.afterSeq !== undefined && query.beforeSeq === undefined
        ? list.slice(0, query.limit)
        : list.slice(Math.max(0, list.length - query.limit))
  }
  return list.map((m) => m.seq)
}

const QUERIES: MessagesQuery[] = [
  {},
  { limit: 5 },
  { limit: 40 },
  { limit: 3000 },
  { limit: 30, beforeSeq: 2985 },
  { limit: 10, beforeSeq: 100 },
  { limit: 10, beforeSeq: 2982 },
  { afterSeq: 2970, limit: 20 },
  { afterSeq: 2980, limit: 5 },
  { afterSeq: 10, limit: 5 },
  { afterSeq: 2975 },
  { afterSeq: 1500 },
  { beforeSeq: 2990 },
  { beforeSeq: 20 },
  { afterSeq: 2970, beforeSeq: 2990 },
  { afterSeq: 2970, beforeSeq: 2990, limit: 5 },
  { afterSeq: 100, beforeSeq: 2995, limit: 30 },
  { afterSeq: 2999 },
  // From the first message: what a reader starting at seq 0 asks.
  { afterSeq: -1, limit: 5 },
  { afterSeq: -1, beforeSeq: 3 },
]

describe('SessionHistory: loading a compacted session', () => {
  it('loads only the latest compaction and the messages after its throughSeq, whatever came before', async () => {
    for (const count of [500, 3000]) {
      const persister = new CountingPersister()
      // An older compaction near the start, the latest near the end.
      await seed(persister, count, { 40: 30, [count - 10]: count - 20 })
      persister.returned = 0
      persister.calls = 0
      const history = new SessionHistory(persister, 's')
      const held = await history.load()
      expect(held.map((m) => m.seq)).toEqual(Array.from({ length: 19 }, (_, i) => count - 19 + i))
      expect(history.heldFrom).toBe(count - 19)
      // One page back from the end: the same cost for 500 and 3 000 messages.
      expect(persister.calls).toBe(1)
      expect(persister.returned).toBe(128)
      expect(history.nextSeq()).toBe(count)
    }
  })

  it('pages back until it has every message after throughSeq when the kept tail is long', async () => {
    const persister = new CountingPersister()
    await seed(persister, 3000, { 2999: 2500 })
    const history = new SessionHistory(persister, 's')
    const held = await history.load()
    expect(held[0]!.seq).toBe(2501)
    expect(held).toHaveLength(499)
    expect(persister.returned).toBeLessThan(1000)
  })

  it('loads everything when the session was never compacted', async () => {
    const persister = new CountingPersister()
    await seed(persister, 2500)
    const history = new SessionHistory(persister, 's')
    expect((await history.load()).map((m) => m.seq)).toEqual(Array.from({ length: 2500 }, (_, i) => i))
    expect(history.heldFrom).toBe(0)
    expect(persister.returned).toBe(2500)
  })

  it('getMessages answers every query like the store, across the boundary of what is held', async () => {
    const persister = new InMemoryPersister()
    await seed(persister, 3000, { 40: 30, 2990: 2980 })
    const all = await persister.getMessages('s')
    const history = new SessionHistory(persister, 's')
    // Before loading (reads the store) and after loading (memory + store).
    for (const query of QUERIES)
      expect(
        (await history.page(query)).map((m) => m.seq),
        JSON.stringify(query),
      ).toEqual(expected(all, query))
    await history.load()
    expect(history.heldFrom).toBe(2981)
    for (const query of QUERIES)
      expect(
        (await history.page(query)).map((m) => m.seq),
        JSON.stringify(query),
      ).toEqual(expected(all, query))
  })

  it('a send on a compacted session reads one page and the whole conversation stays readable through the session', async () => {
    const persister = new CountingPersister()
    await seed(persister, 3000, { 2990: 2980 })
    persister.returned = 0
    const adapter = new ScriptedAdapter([textTurn('reply', { usage: usage(10, 5) })])
    const agent = createAgent({}, { adapter, persister })
    const session = (await agent.getSession('s'))!
    await session.send('hello')
    expect(persister.returned).toBe(128)
    expect(adapter.calls[0]!.options.history.map((m) => m.seq)).toEqual([
      2990, 2981, 2982, 2983, 2984, 2985, 2986, 2987, 2988, 2989, 2991, 2992, 2993, 2994, 2995, 2996, 2997,
      2998, 2999,
    ])
    const everything = await session.getMessages()
    expect(everything.map((m) => m.seq)).toEqual(Array.from({ length: 3002 }, (_, i) => i))
    expect(await session.getMessages({ limit: 4 })).toEqual(everything.slice(-4))
    expect((await session.getMessages({ afterSeq: 2978, limit: 4 })).map((m) => m.seq)).toEqual([
      2979, 2980, 2981, 2982,
    ])
    await agent.close()
  })
})
