import { compareByActivity, type SessionData } from '@agentx/core'
import { definePersisterRule, type PersisterRule } from './define-persister-rule.js'
import { byId, fullSession, minimalSession, textMessage } from './persister-fixtures.js'

const group = 'Sessions'

/** Rules P-SES-*: saving, reading, listing and deleting sessions. */
export const sessionRules: PersisterRule[] = [
  definePersisterRule({
    id: 'P-SES-001',
    level: 'MUST',
    group,
    title: 'save then get returns a deep-equal copy of every field',
    hint: 'Store and return every SessionData field: optional strings, metadata (nested JSON), all tokenUsage parts, state.',
    async check({ persister }, check) {
      const session = fullSession('ses-full')
      await check.resolves(() => persister.saveSession(session), 'saveSession')
      check.deepEqual(
        await persister.getSession('ses-full'),
        session,
        'getSession returned a different session',
      )
    },
  }),
  definePersisterRule({
    id: 'P-SES-002',
    level: 'MUST',
    group,
    title: 'get of an unknown id resolves to null',
    hint: 'Return null (not undefined, not a rejection) when no session has this id.',
    async check({ persister }, check) {
      check.equal(
        await check.resolves(() => persister.getSession('missing'), 'getSession'),
        null,
        'empty store',
      )
      await persister.saveSession(minimalSession('present'))
      check.equal(
        await persister.getSession('missing'),
        null,
        'getSession of an unknown id beside a stored one',
      )
    },
  }),
  definePersisterRule({
    id: 'P-SES-003',
    level: 'MUST',
    group,
    title: 'save with an existing id replaces every field (upsert)',
    hint: 'An upsert replaces the whole row: fields left out of the new value must be gone, not merged from the old one.',
    async check({ persister }, check) {
      await persister.saveSession(fullSession('ses-up'))
      const replacement = minimalSession('ses-up', {
        summary: 'replaced',
        state: 'completed',
        lastActivity: '2026-05-06T07:08:09.010Z',
        metadata: { replaced: true },
      })
      await check.resolves(() => persister.saveSession(replacement), 'saveSession (second time, same id)')
      check.deepEqual(await persister.getSession('ses-up'), replacement, 'the session after the upsert')
      check.equal((await persister.getAllSessions()).length, 1, 'number of sessions after an upsert')
    },
  }),
  definePersisterRule({
    id: 'P-SES-004',
    level: 'MUST',
    group,
    title: 'saving the same value twice equals saving it once',
    hint: 'Saves are idempotent: the kernel retries writes.',
    async check({ persister }, check) {
      const session = fullSession('ses-twice')
      await persister.saveSession(session)
      await persister.saveSession(session)
      check.deepEqual(
        await persister.getAllSessions(),
        [session],
        'getAllSessions after saving one session twice',
      )
      check.deepEqual(
        await persister.listSessions({}),
        [session],
        'listSessions after saving one session twice',
      )
    },
  }),
  definePersisterRule({
    id: 'P-SES-005',
    level: 'MUST',
    group,
    title: 'timestamps round-trip as the same ISO string and createdAt survives re-saves',
    hint: 'Keep timestamps as given: milliseconds (also .000), UTC `Z`, dates before 1970 and far in the future.',
    async check({ persister }, check) {
      const cases = [
        minimalSession('t-epoch', {
          createdAt: '1969-07-20T20:17:40.123Z',
          lastActivity: '1970-01-01T00:00:00.000Z',
        }),
        minimalSession('t-zero-ms', {
          createdAt: '2026-01-01T00:00:00.000Z',
          lastActivity: '2026-01-01T00:00:00.001Z',
        }),
        minimalSession('t-future', {
          createdAt: '2999-12-31T23:59:59.999Z',
          lastActivity: '2999-12-31T23:59:59.999Z',
        }),
      ]
      for (const session of cases) await persister.saveSession(session)
      for (const session of cases) {
        const stored = await persister.getSession(session.id)
        check.deepEqual(
          stored && { createdAt: stored.createdAt, lastActivity: stored.lastActivity },
          { createdAt: session.createdAt, lastActivity: session.lastActivity },
          `timestamps of ${session.id}`,
        )
      }
      const resaved = { ...cases[0]!, lastActivity: '2026-02-03T04:05:06.007Z', summary: 'later' }
      await persister.saveSession(resaved)
      check.deepEqual(await persister.getSession('t-epoch'), resaved, 'createdAt after a re-save')
    },
  }),
  definePersisterRule({
    id: 'P-SES-006',
    level: 'MUST',
    group,
    title: 'getAllSessions returns exactly the saved sessions, without duplicates',
    async check({ persister }, check) {
      check.deepEqual(await persister.getAllSessions(), [], 'getAllSessions of an empty store')
      const sessions = ['s-1', 's-2', 's-3', 's-4', 's-5'].map((id) => fullSession(id))
      for (const session of sessions) await persister.saveSession(session)
      await persister.saveSession(sessions[2]!)
      check.deepEqual(
        byId(await persister.getAllSessions()),
        sessions,
        'getAllSessions after 5 saves and 1 re-save',
      )
    },
  }),
  definePersisterRule({
    id: 'P-SES-007',
    level: 'MUST',
    group,
    title: 'listSessions orders by lastActivity descending, then id descending, stably',
    hint: 'ORDER BY last_activity DESC, id DESC (see compareByActivity in @agentx/core).',
    async check({ persister }, check) {
      const sessions = [
        minimalSession('b', { lastActivity: '2026-01-01T00:00:02.000Z' }),
        minimalSession('a', { lastActivity: '2026-01-01T00:00:03.000Z' }),
        minimalSession('d', { lastActivity: '2026-01-01T00:00:02.000Z' }),
        minimalSession('c', { lastActivity: '2026-01-01T00:00:02.000Z' }),
        minimalSession('e', { lastActivity: '2025-12-31T23:59:59.999Z' }),
        minimalSession('B', { lastActivity: '2026-01-01T00:00:02.000Z' }),
      ]
      for (const session of sessions) await persister.saveSession(session)
      const expected = ['a', 'd', 'c', 'b', 'B', 'e']
      check.deepEqual(
        expected,
        [...sessions].sort(compareByActivity).map((s) => s.id),
        'self-check of the expectation',
      )
      const first = (await persister.listSessions({})).map((s) => s.id)
      check.deepEqual(first, expected, 'listSessions order')
      const second = (await persister.listSessions({})).map((s) => s.id)
      check.deepEqual(second, first, 'listSessions order on a second call')
    },
  }),
  definePersisterRule({
    id: 'P-SES-008',
    level: 'MUST',
    group,
    title: 'listSessions pages with limit and offset without gaps or duplicates',
    hint: 'Apply ORDER BY before LIMIT/OFFSET; limit 0 is an empty page.',
    async check({ persister }, check) {
      for (let i = 0; i < 7; i += 1) {
        await persister.saveSession(
          minimalSession(`p-${i}`, { lastActivity: `2026-01-01T00:00:0${i % 3}.000Z` }),
        )
      }
      const all = (await persister.listSessions({})).map((s) => s.id)
      check.equal(all.length, 7, 'listSessions without limit')
      const paged: string[] = []
      for (let offset = 0; offset < 9; offset += 3) {
        const page = await persister.listSessions({ limit: 3, offset })
        check.ok(page.length <= 3, `page at offset ${offset} is larger than the limit`, {
          actual: page.length,
        })
        paged.push(...page.map((s) => s.id))
      }
      check.deepEqual(paged, all, 'pages of 3 concatenated')
      check.deepEqual(await persister.listSessions({ limit: 0 }), [], 'limit 0')
      check.deepEqual(await persister.listSessions({ offset: 7 }), [], 'offset past the end')
      check.deepEqual(
        (await persister.listSessions({ offset: 5 })).map((s) => s.id),
        all.slice(5),
        'offset without limit',
      )
    },
  }),
  definePersisterRule({
    id: 'P-SES-009',
    level: 'MUST',
    group,
    requires: ['userScoping'],
    title: 'listSessions filters by userId and appName without leaking other sessions',
    hint: 'Filter on exact, case-sensitive equality; combine both filters with AND.',
    async check({ persister }, check) {
      const sessions = [
        minimalSession('u1-a1', { userId: 'u1', appName: 'a1', lastActivity: '2026-01-01T00:00:05.000Z' }),
        minimalSession('u1-a2', { userId: 'u1', appName: 'a2', lastActivity: '2026-01-01T00:00:04.000Z' }),
        minimalSession('u2-a1', { userId: 'u2', appName: 'a1', lastActivity: '2026-01-01T00:00:03.000Z' }),
        minimalSession('U1-a1', { userId: 'U1', appName: 'a1', lastActivity: '2026-01-01T00:00:02.000Z' }),
        minimalSession('none', { lastActivity: '2026-01-01T00:00:01.000Z' }),
        // A user and an app whose names begin with another's: equality, not a prefix (LIKE 'u1%').
        minimalSession('u10-a10', {
          userId: 'u10',
          appName: 'a10',
          lastActivity: '2026-01-01T00:00:00.500Z',
        }),
      ]
      for (const session of sessions) await persister.saveSession(session)
      const ids = async (query: { userId?: string; appName?: string }): Promise<string[]> =>
        (await persister.listSessions(query)).map((s) => s.id)
      check.deepEqual(await ids({ userId: 'u1' }), ['u1-a1', 'u1-a2'], "userId 'u1'")
      check.deepEqual(await ids({ appName: 'a1' }), ['u1-a1', 'u2-a1', 'U1-a1'], "appName 'a1'")
      check.deepEqual(await ids({ userId: 'u1', appName: 'a1' }), ['u1-a1'], "userId 'u1' and appName 'a1'")
      check.deepEqual(await ids({ userId: 'nobody' }), [], 'an unknown userId')
      check.deepEqual(await ids({ userId: 'u2', appName: 'a2' }), [], 'a user without sessions in that app')
    },
  }),
  definePersisterRule({
    id: 'P-SES-010',
    level: 'MUST',
    group,
    title: 'listSessions filters by state',
    hint: 'The kernel asks for state `active` at start-up to repair crashed sessions.',
    async check({ persister }, check) {
      await persister.saveSession(
        minimalSession('x-active', { state: 'active', lastActivity: '2026-01-01T00:00:01.000Z' }),
      )
      await persister.saveSession(
        minimalSession('x-idle', { state: 'idle', lastActivity: '2026-01-01T00:00:02.000Z' }),
      )
      await persister.saveSession(
        minimalSession('y-active', { state: 'active', lastActivity: '2026-01-01T00:00:03.000Z' }),
      )
      const active = (await persister.listSessions({ state: 'active' })).map((s) => s.id)
      check.deepEqual(active, ['y-active', 'x-active'], "listSessions({ state: 'active' })")
      check.deepEqual(await persister.listSessions({ state: 'error' }), [], 'a state no session is in')
    },
  }),
  definePersisterRule({
    id: 'P-SES-011',
    level: 'MUST',
    group,
    title: 'returned sessions are copies: mutating them changes nothing stored',
    hint: 'Return a fresh deep copy from every read (cloneJson from @agentx/core).',
    async check({ persister }, check) {
      const session = fullSession('ses-copy')
      await persister.saveSession(structuredClone(session))
      const mutate = (value: SessionData | undefined | null): void => {
        if (!value) return
        value.summary = 'mutated'
        value.tokenUsage.inputTokens = -1
        ;(value.metadata as { nested: { depth: { level: number } } }).nested.depth.level = 99
      }
      mutate(await persister.getSession('ses-copy'))
      mutate((await persister.getAllSessions())[0])
      mutate((await persister.listSessions({}))[0])
      check.deepEqual(
        await persister.getSession('ses-copy'),
        session,
        'the session after mutating returned copies',
      )
    },
  }),
  definePersisterRule({
    id: 'P-SES-012',
    level: 'MUST',
    group,
    title: 'saveSession neither mutates nor keeps its input',
    hint: 'Copy the input before storing it; never write back into it.',
    async check({ persister }, check) {
      const input = fullSession('ses-input')
      const snapshot = structuredClone(input)
      await persister.saveSession(input)
      check.deepEqual(input, snapshot, 'the input object after saveSession')
      input.summary = 'changed after save'
      ;(input.metadata as { tags: string[] }).tags.push('late')
      check.deepEqual(
        await persister.getSession('ses-input'),
        snapshot,
        'stored session after mutating the input',
      )
    },
  }),
  definePersisterRule({
    id: 'P-SES-013',
    level: 'MUST',
    group,
    title: 'session ids are opaque: special characters, emoji, 255 characters and SQL round-trip',
    hint: 'Bind ids as parameters; never trim, escape, normalise or truncate them.',
    async check({ persister }, check) {
      const ids = [
        'a/b?c#d%e.f$g&h=i+j\\k',
        ' leading and trailing spaces ',
        'tab\there\nnewline',
        "'; DROP TABLE sessions; --",
        'emoji 👨‍👩‍👧‍👦 and ü and 中文',
        `long-${'x'.repeat(250)}`,
        '%_*?[]',
        '0',
      ]
      for (const id of ids) await persister.saveSession(minimalSession(id, { summary: `summary of ${id}` }))
      for (const id of ids) {
        const stored = await persister.getSession(id)
        check.deepEqual(
          stored,
          minimalSession(id, { summary: `summary of ${id}` }),
          `getSession(${JSON.stringify(id)})`,
        )
      }
      const listed = (await persister.getAllSessions()).map((s) => s.id).sort()
      check.deepEqual(listed, [...ids].sort(), 'ids listed by getAllSessions')
      await persister.saveMessage(ids[3]!, textMessage(ids[3]!, 0))
      check.deepEqual(
        await persister.getMessages(ids[3]!),
        [textMessage(ids[3]!, 0)],
        'messages of a SQL-looking id',
      )
    },
  }),
  definePersisterRule({
    id: 'P-SES-014',
    level: 'MUST',
    group,
    title: 'session ids are case-sensitive',
    hint: 'Use a binary (case-sensitive) collation for id columns.',
    async check({ persister }, check) {
      await persister.saveSession(minimalSession('Case-ID', { summary: 'upper' }))
      await persister.saveSession(minimalSession('case-id', { summary: 'lower' }))
      check.equal((await persister.getSession('Case-ID'))?.summary, 'upper', "summary of 'Case-ID'")
      check.equal((await persister.getSession('case-id'))?.summary, 'lower', "summary of 'case-id'")
      check.equal(await persister.getSession('CASE-ID'), null, "getSession('CASE-ID')")
      check.equal((await persister.getAllSessions()).length, 2, 'number of sessions')
    },
  }),
  definePersisterRule({
    id: 'P-SES-015',
    level: 'MUST',
    group,
    title: 'deleteSession removes that session and leaves the others untouched',
    async check({ persister }, check) {
      const sessions = ['keep-1', 'gone', 'keep-2'].map((id) => fullSession(id))
      for (const session of sessions) await persister.saveSession(session)
      await check.resolves(() => persister.deleteSession('gone'), 'deleteSession')
      check.equal(await persister.getSession('gone'), null, 'getSession of the deleted session')
      check.deepEqual(
        byId(await persister.getAllSessions()),
        [sessions[0]!, sessions[2]!],
        'sessions left after deleting one',
      )
    },
  }),
  definePersisterRule({
    id: 'P-SES-016',
    level: 'MUST',
    group,
    title: 'deleting an unknown id or deleting twice is a no-op',
    hint: 'deleteSession resolves whether or not the session exists.',
    async check({ persister }, check) {
      const other = fullSession('other')
      await persister.saveSession(other)
      await check.resolves(() => persister.deleteSession('never-existed'), 'deleteSession of an unknown id')
      await persister.saveSession(minimalSession('twice'))
      await check.resolves(() => persister.deleteSession('twice'), 'first deleteSession')
      await check.resolves(() => persister.deleteSession('twice'), 'second deleteSession')
      check.deepEqual(await persister.getAllSessions(), [other], 'sessions left')
    },
  }),
  definePersisterRule({
    id: 'P-SES-017',
    level: 'MUST',
    group,
    title: "deleteSession cascades to the session's messages only",
    hint: 'messages.session_id REFERENCES sessions ON DELETE CASCADE (with foreign keys enabled).',
    async check({ persister }, check) {
      await persister.saveSession(minimalSession('doomed'))
      await persister.saveSession(minimalSession('survivor'))
      for (let seq = 0; seq < 3; seq += 1) {
        await persister.saveMessage('doomed', textMessage('doomed', seq))
        await persister.saveMessage('survivor', textMessage('survivor', seq))
      }
      await persister.deleteSession('doomed')
      check.deepEqual(await persister.getMessages('doomed'), [], 'messages of the deleted session')
      check.deepEqual(
        await persister.getMessages('survivor'),
        [0, 1, 2].map((seq) => textMessage('survivor', seq)),
        'messages of the other session',
      )
    },
  }),
  definePersisterRule({
    id: 'P-SES-018',
    level: 'MUST',
    group,
    title: 're-creating a deleted session id does not resurrect its old messages',
    async check({ persister }, check) {
      await persister.saveSession(minimalSession('phoenix'))
      for (let seq = 0; seq < 3; seq += 1) await persister.saveMessage('phoenix', textMessage('phoenix', seq))
      await persister.deleteSession('phoenix')
      await persister.saveSession(minimalSession('phoenix', { summary: 'reborn' }))
      check.deepEqual(await persister.getMessages('phoenix'), [], 'messages of the re-created session')
      const fresh = textMessage('phoenix', 0, { id: 'phoenix-new', content: 'new life' })
      await persister.saveMessage('phoenix', fresh)
      check.deepEqual(await persister.getMessages('phoenix'), [fresh], 'messages after one new save')
    },
  }),
  definePersisterRule({
    id: 'P-SES-019',
    level: 'MUST',
    group,
    title: 'optional session fields that were absent stay absent',
    hint: 'Map SQL NULL back to a missing property, never to null, "" or 0.',
    async check({ persister }, check) {
      const session = minimalSession('sparse')
      await persister.saveSession(session)
      const stored = await persister.getSession('sparse')
      check.deepEqual(
        stored ? Object.keys(stored).sort() : stored,
        Object.keys(session).sort(),
        'property names',
      )
      check.deepEqual(
        stored ? Object.keys(stored.tokenUsage).sort() : stored,
        ['inputTokens', 'outputTokens', 'totalTokens'],
        'tokenUsage property names',
      )
      check.deepEqual(stored, session, 'the sparse session')
    },
  }),
]
