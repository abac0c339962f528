import type { AgentPersister, AnyMessage } from '@agentx/core'
import type { RuleCheck } from '../../engine/rule-check.js'
import { definePersisterRule, type PersisterRule } from './define-persister-rule.js'
import { minimalSession, textMessage } from './persister-fixtures.js'
import { PREVIOUS_RELEASE_DATA } from './previous-release-data.js'
import type { StoreSnapshot } from './read-in-fresh-process.js'

const group = 'Migration (optional)'

async function read(persister: AgentPersister, expected: StoreSnapshot): Promise<StoreSnapshot> {
  const sessions = (await persister.getAllSessions()).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  const messages: Record<string, AnyMessage[]> = {}
  for (const id of Object.keys(expected.messages)) messages[id] = await persister.getMessages(id)
  return { sessions, messages }
}

async function expectEveryRow(
  persister: AgentPersister,
  expected: StoreSnapshot,
  check: RuleCheck,
  when: string,
) {
  check.deepEqual(await read(persister, expected), expected, `${when}: every session and message`)
  for (const session of expected.sessions) {
    check.deepEqual(await persister.getSession(session.id), session, `${when}: getSession('${session.id}')`)
  }
}

/**
 * Rules P-MIG-*: a store written by the persister's previous release, opened by this one. They run
 * when the contract options give `migration.createPreviousStore` (see the README).
 */
export const migrationRules: PersisterRule[] = [
  definePersisterRule({
    id: 'P-MIG-001',
    level: 'MUST',
    group,
    requiresOption: 'migration',
    timeoutMs: 30_000,
    title: 'a store written by the previous release reads back deep-equal after the upgrade',
    hint: 'Migrate in place; move fields an old release kept elsewhere into their new place without changing them.',
    async check(context, check) {
      const { persister, expected } = await context.openPreviousStore()
      await expectEveryRow(persister, expected ?? PREVIOUS_RELEASE_DATA, check, 'after the upgrade')
    },
  }),
  definePersisterRule({
    id: 'P-MIG-002',
    level: 'MUST',
    group,
    requiresOption: 'migration',
    timeoutMs: 30_000,
    title: 'an upgraded store takes the new fields and queries beside the old rows',
    hint: 'After the migration the Storage v2 fields, child listings and cascades work on old rows too.',
    async check(context, check) {
      const { persister, expected } = await context.openPreviousStore()
      const old = (expected ?? PREVIOUS_RELEASE_DATA).sessions[0]!
      const child = minimalSession('upgraded-child', { parentSessionId: old.id, activeAgent: 'billing' })
      await persister.saveSession(child)
      const reply = textMessage('upgraded-child', 0, { type: 'agent', agentName: 'billing' })
      await persister.saveMessage('upgraded-child', reply)
      check.deepEqual(await persister.getSession('upgraded-child'), child, 'a new session with v2 fields')
      check.deepEqual(await persister.getMessages('upgraded-child'), [reply], 'a new message with agentName')
      check.ok(
        !(await persister.listSessions({})).some((session) => session.id === 'upgraded-child'),
        'the child session is listed without includeChildren',
      )
      await persister.deleteSession(old.id)
      check.equal(
        await persister.getSession('upgraded-child'),
        null,
        'the child after deleting its old parent',
      )
    },
  }),
  definePersisterRule({
    id: 'P-MIG-003',
    level: 'MUST',
    group,
    requiresOption: 'migration',
    timeoutMs: 30_000,
    title: 'the upgrade is idempotent and safe when ten instances open the old store at once',
    hint: 'Record applied migrations; run them under a lock (BEGIN IMMEDIATE, an advisory lock) and re-check inside it.',
    async check(context, check) {
      const { persister, expected } = await context.openPreviousStore()
      const want = expected ?? PREVIOUS_RELEASE_DATA
      const others = await Promise.all(Array.from({ length: 9 }, () => context.openBeside(persister)))
      const results = await Promise.all([persister, ...others].map((instance) => read(instance, want)))
      for (const [index, result] of results.entries()) check.deepEqual(result, want, `instance ${index}`)
      const again = await context.reopen(persister)
      await expectEveryRow(again, want, check, 'after opening the upgraded store again')
    },
  }),
]
