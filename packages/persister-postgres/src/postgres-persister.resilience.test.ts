import { createServer } from 'node:net'
import type { AnyMessage, Logger, SessionData } from '@agentx/core'
import { isAgentError, PersistenceError } from '@agentx/core'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { adminPool, dropSchema, TEST_DATABASE_URL, testPersister } from '../test/test-database.js'
import { createPostgresPersister, type PostgresPersister } from './index.js'

const admin = adminPool()
afterAll(() => admin.end())

function session(id: string): SessionData {
  return {
    id,
    summary: '',
    createdAt: '2025-03-01T10:00:00.000Z',
    lastActivity: '2025-03-01T10:00:00.000Z',
    state: 'idle',
    tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
  }
}

function message(sessionId: string, seq: number): AnyMessage {
  return {
    id: `${sessionId}-${seq}`,
    sessionId,
    seq,
    type: seq % 2 === 0 ? 'user' : 'agent',
    content: [{ type: 'text', text: `message ${seq} ${'x'.repeat(200)}` }],
    timestamp: '2025-03-01T10:00:00.000Z',
  }
}

/** Terminates every backend of `applicationName`, as a server restart does; returns how many. */
async function terminateBackends(applicationName: string): Promise<number> {
  const { rows } = await admin.query<{ terminated: boolean }>(
    'select pg_terminate_backend(pid) as terminated from pg_stat_activity where application_name = $1',
    [applicationName],
  )
  return rows.filter((row) => row.terminated).length
}

/** Like {@link terminateBackends}, but first waits (bounded) until the pool has a connection open. */
async function terminateBackendsOnceConnected(applicationName: string): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const terminated = await terminateBackends(applicationName)
    if (terminated > 0) return terminated
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  return 0
}

function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = []
  return {
    warnings,
    debug() {},
    info() {},
    error() {},
    warn(message, data) {
      warnings.push(`${message} ${JSON.stringify(data)}`)
    },
  }
}

async function caught(promise: Promise<unknown>): Promise<PersistenceError> {
  try {
    await promise
  } catch (error) {
    expect(isAgentError(error)).toBe(true)
    return error as PersistenceError
  }
  throw new Error('expected a rejection')
}

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

describe('PostgresPersister when connections fail', () => {
  it('recovers when every connection is terminated mid-run: in-flight writes are retried, nothing is lost or doubled', async () => {
    const applicationName = `agentx-restart-${process.pid}`
    const logger = recordingLogger()
    const store = testPersister({
      // The password is ignored by the trust-auth test server but must never be logged.
      connectionString: TEST_DATABASE_URL.replace('postgres://postgres@', 'postgres://postgres:hunter2@'),
      applicationName,
      poolSize: 4,
      retry: { maxRetries: 20, initialDelayMs: 20, maxDelayMs: 200 },
      maxBatchSize: 50,
      logger,
    })
    try {
      // Whether a termination lands on a statement in flight depends on timing, so the run is
      // repeated (each time on a new session) until a write was seen failing and retried.
      for (let attempt = 0; attempt < 8; attempt++) {
        const id = `s${attempt}`
        await store.saveSession(session(id))
        const writes: Array<Promise<void>> = []
        let terminated = 0
        for (let round = 0; round < 10; round++) {
          for (let index = 0; index < 100; index++) {
            const seq = round * 100 + index
            writes.push(store.saveMessage(id, message(id, seq)))
          }
          // Kill the connections while this round's batches are being written.
          if (round % 3 === 1) {
            await new Promise((resolve) => setImmediate(resolve))
            terminated += await terminateBackends(applicationName)
          }
        }
        await Promise.all(writes)
        expect(terminated).toBeGreaterThan(0)
        const stored = await store.getMessages(id)
        expect(stored.map((m) => m.seq)).toEqual(Array.from({ length: 1000 }, (_, seq) => seq))
        expect(stored[999]).toEqual(message(id, 999))
        const { rows } = await admin.query(
          `select count(*)::int as count from "${store.schema}".messages where session_id = $1`,
          [id],
        )
        expect(rows).toEqual([{ count: 1000 }])
        if (logger.warnings.some((warning) => warning.includes('could not save'))) break
      }
      expect(logger.warnings.some((warning) => warning.includes('could not save'))).toBe(true)
      // Reads recover too.
      expect(await terminateBackends(applicationName)).toBeGreaterThan(0)
      expect((await store.getSession('s0'))?.id).toBe('s0')
      expect(logger.warnings.join('\n')).not.toContain('hunter2')
    } finally {
      await store.close()
      await dropSchema(admin, store.schema)
    }
  })

  it('does not crash or reuse dead connections of a pool it was given', async () => {
    const applicationName = `agentx-shared-${process.pid}`
    // As the README advises for a pool the application owns: a client that always has an error
    // listener, so a termination racing the pool's hand-out cannot become an uncaught exception.
    class ListeningClient extends pg.Client {
      constructor(config?: string | pg.ClientConfig) {
        super(config)
        this.on('error', () => undefined)
      }
    }
    const pool = new pg.Pool({
      Client: ListeningClient,
      connectionString: TEST_DATABASE_URL,
      max: 3,
      application_name: applicationName,
    })
    const idleErrors: Error[] = []
    pool.on('error', (error) => idleErrors.push(error))
    const store = testPersister({ pool, retry: { maxRetries: 20, initialDelayMs: 20, maxDelayMs: 200 } })
    try {
      await store.saveSession(session('s'))
      const first = Array.from({ length: 300 }, (_, seq) => store.saveMessage('s', message('s', seq)))
      expect(await terminateBackendsOnceConnected(applicationName)).toBeGreaterThan(0)
      await Promise.all(first)
      // Make sure an idle connection sits in the pool (a loaded machine may have let none survive),
      // then kill it under the pool's feet: the next save must not reuse it.
      // (The pool may still hand out a client killed above first: try until a live one answers.)
      for (let attempt = 0; ; attempt++) {
        try {
          await pool.query('select 1')
          break
        } catch (error) {
          if (attempt >= 5) throw error
        }
      }
      expect(await terminateBackendsOnceConnected(applicationName)).toBeGreaterThan(0)
      await store.saveMessage('s', message('s', 300))
      expect((await store.getMessages('s')).length).toBe(301)
      expect((await pool.query('select 1 as one')).rows).toEqual([{ one: 1 }])
    } finally {
      await store.close()
      await dropSchema(admin, store.schema)
      await pool.end()
    }
  })

  it('rejects with a clear, retryable PersistenceError when the server refuses connections', async () => {
    const port = await closedPort()
    const store: PostgresPersister = createPostgresPersister({
      connectionString: `postgres://postgres@127.0.0.1:${port}/test`,
      retry: { maxRetries: 2, initialDelayMs: 10, maxDelayMs: 20 },
    })
    try {
      for (const call of [
        () => store.getSession('x'),
        () => store.saveSession(session('x')),
        () => store.saveMessage('x', message('x', 0)),
      ]) {
        const error = await caught(call())
        expect(error).toBeInstanceOf(PersistenceError)
        expect(error.code).toBe('PERSISTENCE')
        expect(error.retryable).toBe(true)
        expect(error.message).toContain(`127.0.0.1:${port}/test`)
        expect(error.message).toMatch(/refused.*Is the server running/)
        expect((error.cause as { code?: string }).code).toBe('ECONNREFUSED')
      }
    } finally {
      await store.close()
    }
  })

  it('cancels a statement that exceeds statementTimeoutMs with a retryable BUSY PersistenceError', async () => {
    const store = testPersister({ statementTimeoutMs: 200 })
    const blocker = await admin.connect()
    try {
      await store.saveSession(session('s'))
      await blocker.query('begin')
      await blocker.query(`lock table "${store.schema}".sessions in access exclusive mode`)
      const error = await caught(store.getSession('s'))
      expect(error.code).toBe('BUSY')
      expect(error.retryable).toBe(true)
      expect(error.message).toMatch(/statement timeout/)
      expect((error.cause as { code?: string }).code).toBe('57014')
      await blocker.query('rollback')
      expect((await store.getSession('s'))?.id).toBe('s')

      // A batch that times out fails as a whole (it is not retried row by row), and writes nothing.
      await blocker.query('begin')
      await blocker.query(`lock table "${store.schema}".messages in access exclusive mode`)
      const results = await Promise.allSettled(
        Array.from({ length: 50 }, (_, seq) => store.saveMessage('s', message('s', seq))),
      )
      await blocker.query('rollback')
      expect(results.map((result) => result.status === 'rejected' && result.reason.code)).toEqual(
        Array.from({ length: 50 }, () => 'BUSY'),
      )
      expect(await store.getMessages('s')).toEqual([])
    } finally {
      await blocker.query('rollback').catch(() => undefined)
      blocker.release()
      await store.close()
      await dropSchema(admin, store.schema)
    }
  })
})
