import type { AnyMessage, SessionData } from '@agentx/core'
import pg from 'pg'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import {
  adminPool,
  dropSchema,
  freshSchema,
  TEST_DATABASE_URL,
  testPersister,
} from '../test/test-database.js'
import { createPostgresPersister, type PostgresPersister } from './index.js'

const admin = adminPool()
const open: PostgresPersister[] = []
afterEach(async () => {
  vi.restoreAllMocks()
  for (const persister of open.splice(0)) {
    await persister.close()
    await dropSchema(admin, persister.schema)
  }
})
afterAll(() => admin.end())

function persister(options: Parameters<typeof testPersister>[0] = {}): PostgresPersister {
  const created = testPersister({ poolSize: 2, ...options })
  open.push(created)
  return created
}

function session(id: string): SessionData {
  return {
    id,
    summary: '',
    createdAt: '2026-01-01T00:00:00.000Z',
    lastActivity: '2026-01-01T00:00:00.000Z',
    state: 'idle',
    tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
  }
}

function message(sessionId: string, seq: number): AnyMessage {
  return {
    id: `${sessionId}-${seq}`,
    sessionId,
    seq,
    type: 'agent',
    content: [{ type: 'text', text: `message ${seq}` }],
    timestamp: '2026-01-01T00:00:00.000Z',
  }
}

/** Records the upserts handed to any pg client, in the order they were handed over. */
function recordUpserts(): string[] {
  const sent: string[] = []
  const query = pg.Client.prototype.query
  vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
    const text = args[0]
    if (typeof text === 'string' && text.startsWith('insert into')) {
      sent.push(text.includes('"messages"') ? 'messages' : 'session')
    }
    return (query as (...a: unknown[]) => unknown).apply(this, args)
  } as typeof query)
  return sent
}

async function seqs(schema: string, sessionId: string): Promise<number[]> {
  const { rows } = await admin.query(
    `select seq::int from "${schema}".messages where session_id = $1 order by seq`,
    [sessionId],
  )
  return rows.map((row: { seq: number }) => row.seq)
}

describe('PostgreSQL write connection (pipelined writes)', () => {
  it('sends the session and the first batches of a burst behind it while the burst is still being issued in one synchronous loop', async () => {
    const store = persister({ maxBatchSize: 100, writeConcurrency: 2 })
    await store.getSession('warm-up')
    const sent = recordUpserts()
    // One synchronous loop: a session save, then 2 000 messages of that session.
    const created = store.saveSession(session('t'))
    const burst = Array.from({ length: 2000 }, (_, seq) => store.saveMessage('t', message('t', seq)))
    // Before the loop gave the event loop a turn, the session's upsert went out as soon as the
    // first message was queued, and the full batches as they filled: behind the session on its
    // connection (the server creates the session first), up to four statements in flight there.
    // The rest of the burst waits in the queue.
    expect(sent).toEqual(['session', 'messages', 'messages', 'messages'])
    await Promise.all([created, ...burst])
    expect(sent.filter((kind) => kind === 'messages')).toHaveLength(20)
    expect(await seqs(store.schema, 't')).toEqual(Array.from({ length: 2000 }, (_, seq) => seq))

    // Into an existing session, the batches fill both write connections, four on each.
    sent.length = 0
    const more = Array.from({ length: 2000 }, (_, seq) => store.saveMessage('t', message('t', 2000 + seq)))
    expect(sent).toEqual(Array.from({ length: 8 }, () => 'messages'))
    await Promise.all(more)
    expect(await seqs(store.schema, 't')).toEqual(Array.from({ length: 4000 }, (_, seq) => seq))
  })

  it('writes messages sent behind their session again once a failed upsert of that session succeeds, as in call order', async () => {
    const store = persister({
      maxBatchSize: 50,
      retry: { maxRetries: 3, initialDelayMs: 50, maxDelayMs: 50 },
    })
    await store.getSession('warm-up')
    // The first upsert of session 'flaky' fails with a serialization failure (retried); the
    // batches of its messages already sent behind it on the write connection find no session.
    await admin.query(`create sequence "${store.schema}".attempts;
create function "${store.schema}".fail_once() returns trigger language plpgsql as $$
begin
  if new.id = 'flaky' and nextval('"${store.schema}".attempts') = 1 then
    raise exception 'try again' using errcode = '40001';
  end if;
  return new;
end $$;
create trigger fail_once before insert on "${store.schema}".sessions for each row execute function "${store.schema}".fail_once()`)
    const sent = recordUpserts()
    const created = store.saveSession(session('flaky'))
    const burst = Array.from({ length: 200 }, (_, seq) => store.saveMessage('flaky', message('flaky', seq)))
    expect(sent.slice(0, 2)).toEqual(['session', 'messages'])
    const results = await Promise.allSettled([created, ...burst])
    expect(results.filter((result) => result.status === 'rejected')).toEqual([])
    expect(await seqs(store.schema, 'flaky')).toEqual(Array.from({ length: 200 }, (_, seq) => seq))
    // The messages' first batches really were refused before the session existed.
    expect(sent.filter((kind) => kind === 'messages').length).toBeGreaterThan(4)
  })

  it('opens writeConcurrency connections beside its pool, and none beside a pool it was given', async () => {
    const applicationName = `agentx-write-connection-${process.pid}`
    const connections = async () => {
      const { rows } = await admin.query(
        'select count(*)::int as count from pg_stat_activity where application_name = $1',
        [applicationName],
      )
      return (rows[0] as { count: number }).count
    }
    const own = persister({ applicationName, poolSize: 1, writeConcurrency: 2 })
    await own.saveSession(session('a'))
    await Promise.all(Array.from({ length: 300 }, (_, seq) => own.saveMessage('a', message('a', seq))))
    expect(await own.getMessages('a', { limit: 1 })).toHaveLength(1)
    expect(await connections()).toBe(3)
    await own.close()
    // A backend leaves pg_stat_activity a moment after its client has gone.
    for (let attempt = 0; attempt < 100 && (await connections()) > 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(await connections()).toBe(0)

    const pool = new pg.Pool({
      connectionString: TEST_DATABASE_URL,
      max: 1,
      application_name: applicationName,
    })
    const shared = createPostgresPersister({ pool, schema: freshSchema() })
    try {
      await shared.saveSession(session('b'))
      await Promise.all(Array.from({ length: 300 }, (_, seq) => shared.saveMessage('b', message('b', seq))))
      expect(await seqs(shared.schema, 'b')).toHaveLength(300)
      expect(await connections()).toBe(1)
    } finally {
      await shared.close()
      await dropSchema(admin, shared.schema)
      await pool.end()
    }
  })
})
