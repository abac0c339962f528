import { definePersisterRule, type PersisterRule } from './define-persister-rule.js'
import { minimalSession, textMessage } from './persister-fixtures.js'

const group = 'Retention'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const requires = ['retention'] as const

/** Rules P-RET-*: deleting old sessions in bulk (DESIGN §10.7). */
export const retentionRules: PersisterRule[] = [
  definePersisterRule({
    id: 'P-RET-001',
    level: 'MUST',
    group,
    requires,
    title:
      'deleteSessions removes sessions active strictly before the instant, with their messages, and counts them',
    hint: 'WHERE last_activity < ? (the instant normalised with toISOString); cascade to messages; return the count.',
    async check({ persister }, check) {
      const at = [
        '2025-12-31T23:59:59.998Z',
        '2025-12-31T23:59:59.999Z',
        '2026-01-01T00:00:00.000Z',
        '2026-01-01T00:00:00.001Z',
      ]
      for (const [index, lastActivity] of at.entries()) {
        await persister.saveSession(minimalSession(`ret-${index}`, { lastActivity, state: 'idle' }))
        await persister.saveMessage(`ret-${index}`, textMessage(`ret-${index}`, 0))
      }
      const removed = await check.resolves(
        () => persister.deleteSessions!({ lastActivityBefore: '2026-01-01T00:00:00Z' }),
        'deleteSessions',
      )
      check.equal(removed, 2, 'the count deleteSessions resolved to')
      check.deepEqual(
        (await persister.getAllSessions()).map((session) => session.id).sort(),
        ['ret-2', 'ret-3'],
        'sessions left (one at exactly the instant stays)',
      )
      check.deepEqual(await persister.getMessages('ret-0'), [], 'messages of a deleted session')
      check.equal((await persister.getMessages('ret-2')).length, 1, 'messages of a kept session')
      check.equal(
        await persister.deleteSessions!({ lastActivityBefore: '2026-01-01T00:00:00.000Z' }),
        0,
        'a second run with the same instant',
      )
    },
  }),
  definePersisterRule({
    id: 'P-RET-002',
    level: 'MUST',
    group,
    requires,
    title: 'deleteSessions honours states, userId and appName, and an empty states list deletes nothing',
    hint: 'Add state IN (…), user_id = ? and app_name = ? to the selection.',
    async check({ persister }, check) {
      const old = '2025-01-01T00:00:00.000Z'
      const before = '2026-01-01T00:00:00.000Z'
      await persister.saveSession(
        minimalSession('u-idle', { lastActivity: old, state: 'idle', userId: 'u', appName: 'a' }),
      )
      await persister.saveSession(
        minimalSession('u-active', { lastActivity: old, state: 'active', userId: 'u', appName: 'a' }),
      )
      await persister.saveSession(
        minimalSession('u-other-app', { lastActivity: old, state: 'idle', userId: 'u', appName: 'b' }),
      )
      await persister.saveSession(
        // A user whose id begins with `u`'s: equality, not a prefix.
        minimalSession('v-idle', { lastActivity: old, state: 'idle', userId: 'uu', appName: 'a' }),
      )
      check.equal(
        await persister.deleteSessions!({ lastActivityBefore: before, states: [] }),
        0,
        'states: []',
      )
      check.equal(
        await persister.deleteSessions!({
          lastActivityBefore: before,
          states: ['idle', 'error'],
          userId: 'u',
          appName: 'a',
        }),
        1,
        'idle or error sessions of user u in app a',
      )
      check.deepEqual(
        (await persister.getAllSessions()).map((session) => session.id).sort(),
        ['u-active', 'u-other-app', 'v-idle'],
        'sessions left',
      )
      check.equal(
        await persister.deleteSessions!({ lastActivityBefore: before, userId: 'u' }),
        2,
        'every session of user u',
      )
      check.deepEqual(
        (await persister.getAllSessions()).map((session) => session.id),
        ['v-idle'],
        'sessions left at the end',
      )
    },
  }),
  definePersisterRule({
    id: 'P-RET-003',
    level: 'MUST',
    group,
    requires,
    title: 'deleteSessions also removes the child sessions of what it deletes, and counts them',
    hint: 'Delete the selected sessions and their descendants (by parentSessionId), like deleteSession.',
    async check({ persister }, check) {
      await persister.saveSession(
        minimalSession('old-parent', { lastActivity: '2025-01-01T00:00:00.000Z', state: 'idle' }),
      )
      await persister.saveSession(
        minimalSession('young-child', {
          parentSessionId: 'old-parent',
          lastActivity: '2026-06-01T00:00:00.000Z',
          state: 'completed',
        }),
      )
      await persister.saveSession(
        minimalSession('grandchild', {
          parentSessionId: 'young-child',
          lastActivity: '2026-06-01T00:00:00.000Z',
        }),
      )
      await persister.saveSession(
        minimalSession('young-parent', { lastActivity: '2026-06-01T00:00:00.000Z', state: 'idle' }),
      )
      await persister.saveSession(
        minimalSession('old-child', {
          parentSessionId: 'young-parent',
          lastActivity: '2025-01-01T00:00:00.000Z',
          state: 'active',
        }),
      )
      await persister.saveMessage('grandchild', textMessage('grandchild', 0))
      const removed = await persister.deleteSessions!({
        lastActivityBefore: '2026-01-01T00:00:00.000Z',
        states: ['idle'],
      })
      check.equal(removed, 3, 'the count (old-parent and its two descendants)')
      check.deepEqual(
        (await persister.getAllSessions()).map((session) => session.id).sort(),
        ['old-child', 'young-parent'],
        'sessions left',
      )
      check.deepEqual(await persister.getMessages('grandchild'), [], 'messages of a deleted grandchild')
    },
  }),
  definePersisterRule({
    id: 'P-RET-004',
    level: 'MUST',
    group,
    requires,
    title: 'deleteSessions with an invalid instant or state rejects with VALIDATION and deletes nothing',
    hint: 'Use validateDeleteSessionsQuery from @agentx/core before deleting.',
    async check({ persister }, check) {
      await persister.saveSession(minimalSession('safe', { lastActivity: '2000-01-01T00:00:00.000Z' }))
      const bad: unknown[] = [
        { lastActivityBefore: 'yesterday' },
        { lastActivityBefore: '' },
        {},
        { lastActivityBefore: '2030-01-01T00:00:00.000Z', states: ['gone'] },
      ]
      for (const query of bad) {
        await check.rejectsWithCode(
          () => persister.deleteSessions!(query as never),
          'VALIDATION',
          `deleteSessions(${JSON.stringify(query)})`,
        )
      }
      check.deepEqual(
        (await persister.getAllSessions()).map((session) => session.id),
        ['safe'],
        'sessions left',
      )
    },
  }),
  definePersisterRule({
    id: 'P-RET-005',
    level: 'MUST',
    group,
    requires: ['retention', 'leases'],
    title:
      'deleteSessions leaves a session whose lease is live, with its children; an ended lease protects nothing',
    hint: 'Add (no lease OR lease ended) to the selection of the sessions to delete.',
    async check({ persister }, check) {
      const old = { lastActivity: '2000-01-01T00:00:00.000Z', state: 'idle' as const }
      for (const id of ['running', 'expired', 'released', 'free'])
        await persister.saveSession(minimalSession(id, old))
      await persister.saveMessage('running', textMessage('running', 0))
      await persister.claimSession!('running', 'live-owner', 60_000)
      await persister.claimSession!('expired', 'crashed-owner', 100)
      await persister.claimSession!('released', 'finished-owner', 60_000)
      await persister.releaseSession!('released', 'finished-owner')
      await sleep(250)
      const removed = await check.resolves(
        () => persister.deleteSessions!({ lastActivityBefore: '2030-01-01T00:00:00.000Z' }),
        'deleteSessions',
      )
      check.equal(removed, 3, 'the count (expired, released, free)')
      check.deepEqual(
        (await persister.getAllSessions()).map((session) => session.id).sort(),
        ['running'],
        'sessions left',
      )
      check.equal((await persister.getMessages('running')).length, 1, 'messages of the leased session')
      check.equal(
        await persister.claimSession!('running', 'another-owner', 1_000),
        false,
        'the lease is still held',
      )
    },
  }),
  definePersisterRule({
    id: 'P-RET-006',
    level: 'MUST',
    group,
    requires,
    title:
      "deleteSessions never deletes a child session on its own: a child goes with its parent's tree, however old",
    hint: 'Select only sessions without a stored parent (parentSessionId absent, or its parent gone); their children go with them.',
    async check({ persister }, check) {
      const old = '2000-01-01T00:00:00.000Z'
      // A parent still in use whose sub-agent ran (and may wait for an answer) long ago.
      await persister.saveSession(
        minimalSession('parent', { lastActivity: '2026-06-01T00:00:00.000Z', state: 'waiting_input' }),
      )
      await persister.saveSession(
        minimalSession('child', { parentSessionId: 'parent', lastActivity: old, state: 'waiting_input' }),
      )
      await persister.saveMessage('child', textMessage('child', 0))
      // A child whose parent is gone (left by another tool) is an ordinary old session.
      await persister.saveSession(minimalSession('orphan', { parentSessionId: 'gone', lastActivity: old }))
      const removed = await check.resolves(
        () => persister.deleteSessions!({ lastActivityBefore: '2026-01-01T00:00:00.000Z' }),
        'deleteSessions',
      )
      check.equal(removed, 1, 'the count (the orphan only)')
      check.deepEqual(
        (await persister.getAllSessions()).map((session) => session.id).sort(),
        ['child', 'parent'],
        'sessions left',
      )
      check.equal((await persister.getMessages('child')).length, 1, "the kept child's messages")
    },
  }),
]
