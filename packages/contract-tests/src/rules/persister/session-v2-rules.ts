import {
  type AgentPersister,
  InMemoryPersister,
  type ListSessionsQuery,
  type SessionData,
  type SessionState,
} from '@agentx/core'
import fc from 'fast-check'
import { RuleCheck } from '../../engine/rule-check.js'
import { definePersisterRule, type PersisterRule } from './define-persister-rule.js'
import { byId, fullSession, minimalSession, textMessage } from './persister-fixtures.js'
import { checkRandomized } from './randomized-check.js'

const group = 'Sessions'

const ALL_STATES: readonly SessionState[] = [
  'created',
  'active',
  'idle',
  'error',
  'aborted',
  'completed',
  'interrupted',
]

async function ids(persister: AgentPersister, query: ListSessionsQuery): Promise<string[]> {
  return (await persister.listSessions(query)).map((session) => session.id)
}

/** Rules P-SES-020 … P-SES-025: the session fields and listing filters of Storage v2. */
export const sessionV2Rules: PersisterRule[] = [
  definePersisterRule({
    id: 'P-SES-020',
    level: 'MUST',
    group,
    title: 'activeAgent, parentSessionId, parentToolUseId and forkedFrom round-trip; absent ones stay absent',
    hint: 'Store the Storage v2 fields (DESIGN §10.9) exactly, and write nothing (no null) for an absent one.',
    async check({ persister }, check) {
      const child = fullSession('v2-child', {
        activeAgent: 'billing',
        parentSessionId: 'v2-parent',
        parentToolUseId: 'toolu_0123',
        forkedFrom: { sessionId: 'v2-origin', seq: 7 },
      })
      const bare = minimalSession('v2-bare')
      await check.resolves(() => persister.saveSession(child), 'saveSession with the v2 fields')
      await persister.saveSession(bare)
      check.deepEqual(
        await persister.getSession('v2-child'),
        child,
        'getSession of the session with v2 fields',
      )
      check.deepEqual(await persister.getSession('v2-bare'), bare, 'getSession of a session without them')
      const replaced = fullSession('v2-child', { activeAgent: 'support' })
      await persister.saveSession(replaced)
      check.deepEqual(
        await persister.getSession('v2-child'),
        replaced,
        'after an upsert that drops some v2 fields',
      )
      check.deepEqual(
        byId(await persister.listSessions({ includeChildren: true })),
        [bare, replaced],
        'listSessions of both',
      )
    },
  }),
  definePersisterRule({
    id: 'P-SES-021',
    level: 'MUST',
    group,
    title: 'listSessions filters by one state or by several; an empty list of states matches nothing',
    hint: '`state` is a SessionState or an array of them: WHERE state IN (…).',
    async check({ persister }, check) {
      const states: SessionState[] = ['idle', 'error', 'active', 'completed']
      for (const [index, state] of states.entries()) {
        await persister.saveSession(
          minimalSession(`st-${state}`, { state, lastActivity: `2026-01-0${index + 1}T00:00:00.000Z` }),
        )
      }
      check.deepEqual(await ids(persister, { state: 'error' }), ['st-error'], "state: 'error'")
      check.deepEqual(
        await ids(persister, { state: ['idle', 'completed', 'error'] }),
        ['st-completed', 'st-error', 'st-idle'],
        "state: ['idle', 'completed', 'error']",
      )
      check.deepEqual(await ids(persister, { state: [] }), [], 'state: []')
      check.deepEqual(
        await ids(persister, { state: ['active', 'idle'], limit: 1, offset: 1 }),
        ['st-idle'],
        'a page of a state filter',
      )
    },
  }),
  definePersisterRule({
    id: 'P-SES-022',
    level: 'MUST',
    group,
    title: 'listSessions filters by the exact value of one metadata key of any name',
    hint: 'Compare key and JSON value exactly: 1, "1" and true differ; keys with dots, quotes or $ are plain names.',
    async check({ persister }, check) {
      await persister.saveSession(
        minimalSession('md-a', {
          lastActivity: '2026-01-03T00:00:00.000Z',
          metadata: { 'a.b': 'x', 'say "hi"': 1, $gt: true, n: 1 },
        }),
      )
      await persister.saveSession(
        minimalSession('md-b', {
          lastActivity: '2026-01-02T00:00:00.000Z',
          metadata: { 'a.b': 'y', 'say "hi"': '1', n: 1.5 },
        }),
      )
      await persister.saveSession(
        minimalSession('md-c', { lastActivity: '2026-01-01T00:00:00.000Z', metadata: { a: { b: 'x' } } }),
      )
      await persister.saveSession(minimalSession('md-none', { lastActivity: '2026-01-04T00:00:00.000Z' }))
      const cases: Array<[ListSessionsQuery['metadata'] & object, string[]]> = [
        [{ key: 'a.b', value: 'x' }, ['md-a']],
        [{ key: 'say "hi"', value: 1 }, ['md-a']],
        [{ key: 'say "hi"', value: '1' }, ['md-b']],
        [{ key: '$gt', value: true }, ['md-a']],
        [{ key: '$gt', value: 1 }, []],
        [{ key: 'n', value: 1.5 }, ['md-b']],
        [{ key: 'a', value: 'x' }, []],
        [{ key: 'missing', value: 'x' }, []],
      ]
      for (const [metadata, expected] of cases) {
        check.deepEqual(await ids(persister, { metadata }), expected, `metadata ${JSON.stringify(metadata)}`)
      }
      check.deepEqual(
        await ids(persister, { metadata: { key: 'a.b', value: 'y' }, state: 'created' }),
        ['md-b'],
        'metadata together with a state filter',
      )
    },
  }),
  definePersisterRule({
    id: 'P-SES-023',
    level: 'MUST',
    group,
    title: 'child sessions are left out of listSessions unless includeChildren, and in getAllSessions',
    hint: 'Without includeChildren: WHERE parent_session_id IS NULL. getAllSessions returns every session.',
    async check({ persister }, check) {
      await persister.saveSession(minimalSession('parent', { lastActivity: '2026-01-01T00:00:00.000Z' }))
      await persister.saveSession(
        minimalSession('child', { parentSessionId: 'parent', lastActivity: '2026-01-02T00:00:00.000Z' }),
      )
      check.deepEqual(await ids(persister, {}), ['parent'], 'listSessions({})')
      check.deepEqual(await ids(persister, { includeChildren: false }), ['parent'], 'includeChildren: false')
      check.deepEqual(
        await ids(persister, { includeChildren: true }),
        ['child', 'parent'],
        'includeChildren: true',
      )
      check.deepEqual(
        (await persister.getAllSessions()).map((session) => session.id).sort(),
        ['child', 'parent'],
        'getAllSessions',
      )
      check.deepEqual(await ids(persister, { limit: 1 }), ['parent'], 'the first page leaves the child out')
    },
  }),
  definePersisterRule({
    id: 'P-SES-024',
    level: 'MUST',
    group,
    title: 'deleteSession also deletes every descendant session with its messages, and nothing else',
    hint: 'Follow parentSessionId down any depth (a recursive CTE); stop at cycles.',
    async check({ persister }, check) {
      for (const session of [
        minimalSession('root'),
        minimalSession('kid', { parentSessionId: 'root' }),
        minimalSession('grandkid', { parentSessionId: 'kid' }),
        minimalSession('stranger'),
        minimalSession('strangers-kid', { parentSessionId: 'stranger' }),
      ]) {
        await persister.saveSession(session)
        await persister.saveMessage(session.id, textMessage(session.id, 0))
      }
      await check.resolves(() => persister.deleteSession('root'), 'deleteSession of the root')
      check.deepEqual(
        (await persister.getAllSessions()).map((session) => session.id).sort(),
        ['stranger', 'strangers-kid'],
        'sessions left',
      )
      for (const id of ['root', 'kid', 'grandkid']) {
        check.deepEqual(await persister.getMessages(id), [], `messages of deleted '${id}'`)
      }
      check.deepEqual(
        (await persister.getMessages('strangers-kid')).length,
        1,
        'messages of an unrelated child',
      )
    },
  }),
  definePersisterRule({
    id: 'P-SES-025',
    level: 'MUST',
    group,
    timeoutMs: 90_000,
    title:
      'random sequences of saves, deletes and filtered, paged listings agree with the reference persister',
    hint: 'Each failure names the seed and the shrunk operations: replay them against InMemoryPersister.',
    async check(context, check) {
      const scoped = context.capabilities.has('userScoping')
      const retention = context.capabilities.has('retention')
      const idPool = ['a', 'B', 'b', 'a/1', 'é', 'Z9']
      const instants = ['2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.001Z', '2026-01-02T00:00:00.000Z']
      const save = fc.record({
        kind: fc.constant('save' as const),
        id: fc.constantFrom(...idPool),
        lastActivity: fc.constantFrom(...instants),
        state: fc.constantFrom(...ALL_STATES),
        userId: fc.option(fc.constantFrom('u1', 'u2'), { nil: undefined }),
        appName: fc.option(fc.constantFrom('app'), { nil: undefined }),
        // Mostly top-level sessions: children are left out of most listings.
        parent: fc.oneof(
          { arbitrary: fc.constant(undefined), weight: 3 },
          { arbitrary: fc.constantFrom(...idPool), weight: 1 },
        ),
        tag: fc.option(fc.constantFrom<string | number>('x', 'y', 1), { nil: undefined }),
      })
      const remove = fc.record({ kind: fc.constant('delete' as const), id: fc.constantFrom(...idPool) })
      const list = fc.record({
        kind: fc.constant('list' as const),
        state: fc.option(fc.oneof(fc.constantFrom(...ALL_STATES), fc.subarray([...ALL_STATES])), {
          nil: undefined,
        }),
        userId: fc.option(fc.constantFrom('u1', 'u2'), { nil: undefined }),
        tag: fc.option(fc.constantFrom<string | number>('x', 'y', 1, '1'), { nil: undefined }),
        includeChildren: fc.option(fc.boolean(), { nil: undefined }),
        limit: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
        offset: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined, freq: 2 }),
      })
      const prune = fc.record({
        kind: fc.constant('deleteSessions' as const),
        before: fc.constantFrom(...instants),
        states: fc.option(fc.subarray([...ALL_STATES]), { nil: undefined }),
        userId: fc.option(fc.constantFrom('u1', 'u2'), { nil: undefined }),
      })
      const operation = retention
        ? fc.oneof(save, save, remove, list, list, prune)
        : fc.oneof(save, save, remove, list, list)
      type Operation = typeof operation extends fc.Arbitrary<infer T> ? T : never
      const toSession = (op: Extract<Operation, { kind: 'save' }>): SessionData =>
        minimalSession(op.id, {
          lastActivity: op.lastActivity,
          state: op.state,
          ...(op.userId === undefined ? {} : { userId: op.userId }),
          ...(op.appName === undefined ? {} : { appName: op.appName }),
          ...(op.parent === undefined || op.parent === op.id ? {} : { parentSessionId: op.parent }),
          ...(op.tag === undefined ? {} : { metadata: { tag: op.tag } }),
        })
      await checkRandomized(
        check,
        fc.array(operation, { minLength: 1, maxLength: 30 }),
        async (operations) => {
          const subject = await context.create()
          const reference = new InMemoryPersister()
          const step = new RuleCheck('P-SES-025')
          for (const [index, op] of operations.entries()) {
            const where = `operation ${index} (${op.kind})`
            if (op.kind === 'save') {
              await subject.saveSession(toSession(op))
              await reference.saveSession(toSession(op))
            } else if (op.kind === 'delete') {
              await subject.deleteSession(op.id)
              await reference.deleteSession(op.id)
            } else if (op.kind === 'deleteSessions') {
              const query = {
                lastActivityBefore: op.before,
                ...(op.states === undefined ? {} : { states: op.states }),
                ...(op.userId === undefined || !scoped ? {} : { userId: op.userId }),
              }
              step.equal(
                await subject.deleteSessions!(query),
                await reference.deleteSessions(query),
                `${where}: count`,
              )
            } else {
              const query: ListSessionsQuery = {
                ...(op.state === undefined ? {} : { state: op.state }),
                ...(op.userId === undefined || !scoped ? {} : { userId: op.userId }),
                ...(op.tag === undefined ? {} : { metadata: { key: 'tag', value: op.tag } }),
                ...(op.includeChildren === undefined ? {} : { includeChildren: op.includeChildren }),
                ...(op.limit === undefined ? {} : { limit: op.limit }),
                ...(op.offset === undefined ? {} : { offset: op.offset }),
              }
              step.deepEqual(
                await subject.listSessions(query),
                await reference.listSessions(query),
                `${where}: listSessions(${JSON.stringify(query)})`,
              )
            }
          }
          step.deepEqual(
            byId(await subject.getAllSessions()),
            byId(await reference.getAllSessions()),
            'getAllSessions at the end',
          )
          await subject.close?.()
        },
        { numRuns: 15 },
      )
    },
  }),
]
