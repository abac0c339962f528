import type { AgentPersister, AnyMessage, SessionData } from '@agentx/core'
import { definePersisterRule, type PersisterRule } from './define-persister-rule.js'
import { byId, fullSession, minimalSession, richMessages, textMessage } from './persister-fixtures.js'

const group = 'Lifecycle'

/** Calls of every method, with valid and invalid arguments, for P-LIF-001 and P-LIF-006. */
function everyCall(persister: AgentPersister): Array<[string, () => unknown]> {
  const bad = undefined as never
  return [
    ['saveSession(valid)', () => persister.saveSession(minimalSession('lif'))],
    ['saveSession(undefined)', () => persister.saveSession(bad)],
    ['getSession(valid)', () => persister.getSession('lif')],
    ['getSession(undefined)', () => persister.getSession(bad)],
    ['getAllSessions()', () => persister.getAllSessions()],
    ['listSessions({})', () => persister.listSessions({})],
    ['listSessions(undefined)', () => persister.listSessions(bad)],
    ['deleteSession(valid)', () => persister.deleteSession('lif-other')],
    ['deleteSession(undefined)', () => persister.deleteSession(bad)],
    ['saveMessage(valid)', () => persister.saveMessage('lif', textMessage('lif', 0))],
    ['saveMessage(undefined, undefined)', () => persister.saveMessage(bad, bad)],
    ['getMessages(valid)', () => persister.getMessages('lif')],
    ['getMessages(undefined)', () => persister.getMessages(bad, bad)],
    ['deleteMessages(valid)', () => persister.deleteMessages('lif')],
    ['deleteMessages(undefined)', () => persister.deleteMessages(bad)],
    ...optionalCalls(persister, bad),
  ]
}

/** Calls of the optional methods (leases, retention) the persister has. */
function optionalCalls(persister: AgentPersister, bad: never): Array<[string, () => unknown]> {
  const calls: Array<[string, () => unknown]> = []
  if (persister.claimSession) {
    calls.push(['claimSession(valid)', () => persister.claimSession!('lif', 'owner', 1000)])
    calls.push(['claimSession(undefined)', () => persister.claimSession!(bad, bad, bad)])
  }
  if (persister.releaseSession) {
    calls.push(['releaseSession(valid)', () => persister.releaseSession!('lif', 'owner')])
    calls.push(['releaseSession(undefined)', () => persister.releaseSession!(bad, bad)])
  }
  if (persister.markInterrupted) {
    calls.push(['markInterrupted()', () => persister.markInterrupted!()])
    calls.push(['markInterrupted(null)', () => persister.markInterrupted!(null as never)])
  }
  if (persister.deleteSessions) {
    calls.push([
      'deleteSessions(valid)',
      () => persister.deleteSessions!({ lastActivityBefore: '2000-01-01T00:00:00.000Z' }),
    ])
    calls.push(['deleteSessions(undefined)', () => persister.deleteSessions!(bad)])
  }
  return calls
}

/** Everything in a store, for before/after comparisons across a reopen. */
async function snapshot(persister: AgentPersister, sessionIds: readonly string[]): Promise<unknown> {
  const sessions: SessionData[] = byId(await persister.getAllSessions())
  const messages: Record<string, AnyMessage[]> = {}
  for (const id of sessionIds) messages[id] = await persister.getMessages(id)
  return { sessions, listed: (await persister.listSessions({})).map((s) => s.id), messages }
}

/** Rules P-LIF-*: promises, isolation, durability, close. */
export const lifecycleRules: PersisterRule[] = [
  definePersisterRule({
    id: 'P-LIF-001',
    level: 'MUST',
    group,
    title: 'every method returns a Promise and never throws synchronously',
    hint: 'Make every method `async` so validation errors become rejections.',
    async check({ persister }, check) {
      for (const [name, call] of [...everyCall(persister), ['close()', () => persister.close?.()] as const]) {
        let result: unknown
        try {
          result = call()
        } catch (error) {
          check.fail(`${name} threw synchronously`, { expected: 'a rejected promise', actual: String(error) })
        }
        if (name === 'close()' && persister.close === undefined) continue
        check.ok(
          result instanceof Promise || typeof (result as { then?: unknown })?.then === 'function',
          `${name} did not return a promise`,
          {
            actual: result,
          },
        )
        await Promise.resolve(result).catch(() => undefined)
      }
    },
  }),
  definePersisterRule({
    id: 'P-LIF-002',
    level: 'MUST',
    group,
    title: 'two instances from create() are isolated',
    hint: 'create() must give a new empty store each time (a new file, schema or database).',
    async check(context, check) {
      const first = context.persister
      const second = await context.create()
      check.deepEqual(await second.getAllSessions(), [], 'a second instance starts empty')
      await first.saveSession(fullSession('only-in-first'))
      await first.saveMessage('only-in-first', textMessage('only-in-first', 0))
      check.equal(
        await second.getSession('only-in-first'),
        null,
        'second.getSession of a session saved in the first',
      )
      check.deepEqual(await second.getMessages('only-in-first'), [], 'second.getMessages of it')
      await second.saveSession(minimalSession('only-in-second'))
      check.deepEqual(
        (await first.getAllSessions()).map((s) => s.id),
        ['only-in-first'],
        'sessions of the first instance',
      )
    },
  }),
  definePersisterRule({
    id: 'P-LIF-003',
    level: 'MUST',
    group,
    requires: ['durable'],
    title: 'sessions survive close and reopen',
    hint: 'reopen(persister) must see the same storage; flush everything before close() resolves.',
    async check(context, check) {
      const sessions = [
        fullSession('durable-1', { lastActivity: '2026-01-01T00:00:03.000Z' }),
        minimalSession('durable-2', {
          createdAt: '1969-07-20T20:17:40.123Z',
          lastActivity: '2026-01-01T00:00:03.000Z',
        }),
        fullSession('durable-3', {
          lastActivity: '2026-01-01T00:00:01.000Z',
          metadata: { unicode: 'e\u0301 👨‍👩‍👧' },
        }),
      ]
      for (const session of sessions) await context.persister.saveSession(session)
      const reopened = await context.reopen(context.persister)
      check.deepEqual(byId(await reopened.getAllSessions()), sessions, 'sessions after reopen')
      check.deepEqual(
        (await reopened.listSessions({})).map((s) => s.id),
        ['durable-2', 'durable-1', 'durable-3'],
        'listSessions order after reopen',
      )
    },
  }),
  definePersisterRule({
    id: 'P-LIF-004',
    level: 'MUST',
    group,
    requires: ['durable'],
    title: 'messages survive close and reopen with content, order and timestamps',
    async check(context, check) {
      await context.persister.saveSession(minimalSession('kept'))
      const messages = richMessages('kept')
      for (const message of [...messages].reverse()) await context.persister.saveMessage('kept', message)
      const reopened = await context.reopen(context.persister)
      check.deepEqual(await reopened.getMessages('kept'), messages, 'messages after reopen')
      const next = textMessage('kept', messages.length)
      await reopened.saveMessage('kept', next)
      check.deepEqual(await reopened.getMessages('kept'), [...messages, next], 'a message saved after reopen')
    },
  }),
  definePersisterRule({
    id: 'P-LIF-005',
    level: 'MUST',
    group,
    requires: ['durable'],
    title: 'deletes and upserts survive close and reopen',
    async check(context, check) {
      const p = context.persister
      for (const id of ['gone', 'changed']) {
        await p.saveSession(minimalSession(id))
        for (let seq = 0; seq < 2; seq += 1) await p.saveMessage(id, textMessage(id, seq))
      }
      await p.deleteSession('gone')
      await p.saveSession(minimalSession('changed', { summary: 'second version', state: 'idle' }))
      await p.saveMessage('changed', textMessage('changed', 1, { content: 'rewritten' }))
      const before = await snapshot(p, ['gone', 'changed'])
      const reopened = await context.reopen(p)
      check.deepEqual(await snapshot(reopened, ['gone', 'changed']), before, 'the store after reopen')
      check.equal(await reopened.getSession('gone'), null, 'the deleted session after reopen')
      check.equal((await reopened.getSession('changed'))?.summary, 'second version', 'the upserted summary')
    },
  }),
  definePersisterRule({
    id: 'P-LIF-008',
    level: 'MUST',
    group,
    requires: ['durable'],
    requiresOption: 'freshProcess',
    timeoutMs: 45_000,
    title: 'a fresh process reads back everything that was stored',
    hint: 'Data must live in storage: the kit opens the store in a new node process through freshProcess.module.',
    async check(context, check) {
      const p = context.persister
      const sessions = [
        fullSession('fresh-1', { lastActivity: '2026-01-01T00:00:02.000Z', activeAgent: 'billing' }),
        minimalSession('fresh-2', { createdAt: '1969-07-20T20:17:40.123Z', parentSessionId: 'fresh-1' }),
      ]
      for (const session of sessions) await p.saveSession(session)
      const messages = richMessages('fresh-1')
      for (const message of [...messages].reverse()) await p.saveMessage('fresh-1', message)
      await p.deleteSession('fresh-never')
      const read = await check.resolves(
        () => context.readInFreshProcess(p, ['fresh-1', 'fresh-2']),
        'reading the store in a fresh process',
      )
      check.deepEqual(
        read,
        { sessions: byId(sessions), messages: { 'fresh-1': messages, 'fresh-2': [] } },
        'what the fresh process read',
      )
    },
  }),
  definePersisterRule({
    id: 'P-LIF-006',
    level: 'MUST',
    group,
    title: 'after close() every call rejects with CLOSED',
    hint: 'Track a closed flag and throw PersistenceError({ code: "CLOSED" }). A persister without close() passes trivially.',
    async check({ persister }, check) {
      if (!persister.close) return
      await persister.saveSession(minimalSession('lif'))
      await check.resolves(() => persister.close!(), 'close()')
      for (const [name, call] of everyCall(persister)) {
        if (name.includes('undefined')) continue
        await check.rejectsWithCode(async () => call(), 'CLOSED', `${name} after close()`)
      }
    },
  }),
  definePersisterRule({
    id: 'P-LIF-007',
    level: 'MUST',
    group,
    title: 'close() is idempotent',
    hint: 'A second close() resolves. A persister without close() passes trivially.',
    async check({ persister }, check) {
      if (!persister.close) return
      await check.resolves(() => persister.close!(), 'first close()')
      await check.resolves(() => persister.close!(), 'second close()')
      await check.resolves(
        () => Promise.all([persister.close!(), persister.close!()]),
        'two concurrent close() calls',
      )
    },
  }),
]
