import type { AgentPersister, AnyMessage, SessionData } from '@agentx/core'
import { InMemoryPersister } from '@agentx/core'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { adminPool, dropSchema, TEST_DATABASE_URL, testPersister } from '../test/test-database.js'

const admin = adminPool()
afterAll(() => admin.end())

function session(id: string, version: number): SessionData {
  return {
    id,
    summary: `v${version}`,
    createdAt: '2025-03-01T10:00:00.000Z',
    lastActivity: `2025-03-01T10:00:${String(version % 60).padStart(2, '0')}.000Z`,
    state: 'idle',
    tokenUsage: { inputTokens: version, outputTokens: 0, totalTokens: version },
  }
}

/** Messages `a<seq>` and `b<seq>` compete for the same seq; each id keeps its seq. */
function message(sessionId: string, variant: 'a' | 'b', seq: number, version: number): AnyMessage {
  return {
    id: `${variant}${seq}`,
    sessionId,
    seq,
    type: 'agent',
    content: `${variant}${seq} version ${version}`,
    timestamp: '2025-03-01T10:00:00.000Z',
    ...(version % 3 === 0 ? { incomplete: true } : {}),
  }
}

type Operation = (persister: AgentPersister) => Promise<unknown>

/**
 * A reproducible random sequence of writes over three sessions. (Reads are left out: a read sees
 * every write issued before it, and may also see later ones that ran beside it.)
 */
function operations(count: number, seed: number): Operation[] {
  let state = seed
  const next = (range: number): number => {
    state = (state * 1103515245 + 12345) % 2 ** 31
    return state % range
  }
  const sessions = ['s0', 's1', 's2']
  const list: Operation[] = []
  for (let index = 0; index < count; index++) {
    const id = sessions[next(sessions.length)]!
    const kind = next(100)
    if (kind < 55) {
      const variant = next(4) === 0 ? 'b' : 'a'
      const seq = next(6)
      list.push((p) => p.saveMessage(id, message(id, variant, seq, index)))
    } else if (kind < 85) list.push((p) => p.saveSession(session(id, index)))
    else if (kind < 90) list.push((p) => p.deleteSession(id))
    else list.push((p) => p.deleteMessages(id))
  }
  return list
}

async function outcomes(persister: AgentPersister, list: Operation[]): Promise<unknown[]> {
  const settled = await Promise.allSettled(list.map((operation) => operation(persister)))
  return settled.map((result) =>
    result.status === 'fulfilled'
      ? { value: result.value ?? null }
      : { error: (result.reason as { code?: string }).code },
  )
}

async function contents(persister: AgentPersister): Promise<unknown> {
  const sessions = await persister.listSessions({})
  const messages: Record<string, AnyMessage[]> = {}
  for (const id of ['s0', 's1', 's2']) messages[id] = await persister.getMessages(id)
  return { sessions, messages }
}

describe('batched, concurrent writes', () => {
  it.each([
    ['pipelined on three write connections', false],
    ['on the connections of a pool it was given', true],
  ])(
    'give every call the outcome it has in call order, like the in-memory reference persister (%s)',
    async (_, shared) => {
      const codes = new Set<string>()
      for (const seed of [1, 2, 3]) {
        const list = operations(400, seed)
        const reference = new InMemoryPersister()
        const pool = shared ? new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 4 }) : undefined
        const store = testPersister({
          maxBatchSize: 7,
          writeConcurrency: 3,
          poolSize: 4,
          ...(pool ? { pool } : {}),
        })
        try {
          const expected = await outcomes(reference, list)
          const actual = await outcomes(store, list)
          expect(actual).toEqual(expected)
          expect(await contents(store)).toEqual(await contents(reference))
          for (const outcome of expected) codes.add((outcome as { error?: string }).error ?? 'ok')
        } finally {
          await store.close()
          await dropSchema(admin, store.schema)
          await pool?.end()
        }
      }
      // The sequences exercised the interesting outcomes.
      expect([...codes].sort()).toEqual(['CONFLICT', 'NOT_FOUND', 'ok'])
    },
  )
})
