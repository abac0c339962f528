import { type AnyMessage, type GetMessagesQuery, InMemoryPersister, isAgentError } from '@agentx/core'
import fc from 'fast-check'
import { RuleCheck } from '../../engine/rule-check.js'
import { definePersisterRule, type PersisterRule } from './define-persister-rule.js'
import { minimalSession, textMessage } from './persister-fixtures.js'
import { checkRandomized } from './randomized-check.js'

const group = 'Messages'

let runs = 0

/** Rules P-MSG-024 … P-MSG-026: backward paging, the message fields of Storage v2, random sequences. */
export const messageV2Rules: PersisterRule[] = [
  definePersisterRule({
    id: 'P-MSG-024',
    level: 'MUST',
    group,
    title: 'beforeSeq with limit returns the last `limit` messages before it, in seq order',
    hint: 'WHERE seq < beforeSeq (and seq > afterSeq) ORDER BY seq DESC LIMIT limit, then reverse.',
    async check({ persister }, check) {
      await persister.saveSession(minimalSession('back'))
      const messages = Array.from({ length: 10 }, (_, seq) => textMessage('back', seq))
      for (const seq of [9, 0, 5, 2, 7, 1, 8, 3, 6, 4]) await persister.saveMessage('back', messages[seq]!)
      const seqs = async (query: GetMessagesQuery) =>
        (await persister.getMessages('back', query)).map((m) => m.seq)
      check.deepEqual(await seqs({ beforeSeq: 6, limit: 3 }), [3, 4, 5], 'beforeSeq 6, limit 3')
      check.deepEqual(await seqs({ beforeSeq: 6 }), [0, 1, 2, 3, 4, 5], 'beforeSeq 6 without limit')
      check.deepEqual(await seqs({ beforeSeq: 2, limit: 5 }), [0, 1], 'a limit larger than what is before')
      check.deepEqual(await seqs({ beforeSeq: 0, limit: 5 }), [], 'beforeSeq 0')
      check.deepEqual(
        await seqs({ afterSeq: 1, beforeSeq: 8, limit: 2 }),
        [6, 7],
        'afterSeq 1, beforeSeq 8, limit 2',
      )
      check.deepEqual(
        await seqs({ beforeSeq: Number.MAX_SAFE_INTEGER, limit: 4 }),
        [6, 7, 8, 9],
        'the latest page (beforeSeq MAX_SAFE_INTEGER)',
      )
      const seen: number[] = []
      let before = Number.MAX_SAFE_INTEGER
      for (let guard = 0; guard < 12; guard += 1) {
        const page = await seqs({ beforeSeq: before, limit: 3 })
        if (page.length === 0) break
        seen.unshift(...page)
        before = page[0]!
      }
      check.deepEqual(
        seen,
        messages.map((m) => m.seq),
        'every message once, paging backwards by 3',
      )
      check.deepEqual(
        await persister.getMessages('back', { beforeSeq: 3, limit: 1 }),
        [messages[2]],
        'the messages themselves',
      )
    },
  }),
  definePersisterRule({
    id: 'P-MSG-025',
    level: 'MUST',
    group,
    title: 'agentName and compaction round-trip; absent ones stay absent',
    hint: 'Store the Storage v2 message fields (DESIGN §10.9) exactly and write nothing for an absent one.',
    async check({ persister }, check) {
      await persister.saveSession(minimalSession('fields'))
      const summary = textMessage('fields', 0, {
        type: 'system',
        content: [{ type: 'text', text: 'Summary of 0 … 41' }],
        compaction: { throughSeq: 41 },
        usage: { inputTokens: 900, outputTokens: 80, totalTokens: 980 },
      })
      const reply = textMessage('fields', 1, { type: 'agent', agentName: 'billing', stopReason: 'end_turn' })
      const plain = textMessage('fields', 2)
      for (const message of [summary, reply, plain]) {
        await check.resolves(() => persister.saveMessage('fields', message), `saveMessage seq ${message.seq}`)
      }
      check.deepEqual(await persister.getMessages('fields'), [summary, reply, plain], 'getMessages')
      const rewritten = textMessage('fields', 1, {
        type: 'agent',
        content: 'rewritten',
        stopReason: 'end_turn',
      })
      await persister.saveMessage('fields', rewritten)
      check.deepEqual(
        await persister.getMessages('fields', { afterSeq: 0, limit: 1 }),
        [rewritten],
        'an upsert that drops agentName',
      )
    },
  }),
  definePersisterRule({
    id: 'P-MSG-026',
    level: 'MUST',
    group,
    timeoutMs: 90_000,
    title: 'random sequences of saves, re-saves, deletes and paged reads agree with the reference persister',
    hint: 'Random ids, timestamps and insertion orders: order by seq only; page with afterSeq, beforeSeq and limit.',
    async check({ persister }, check) {
      const idPool = ['m-z', 'm-a', 'M-a', 'm-10', 'm-9', 'é']
      const stamps = [
        '2026-01-01T00:00:00.000Z',
        '2025-12-31T23:59:59.999Z',
        '2026-01-01T00:00:00.000Z',
        '1999-01-01T00:00:00.000Z',
      ]
      const save = fc.record({
        kind: fc.constant('save' as const),
        session: fc.integer({ min: 0, max: 1 }),
        id: fc.constantFrom(...idPool),
        seq: fc.integer({ min: 0, max: 12 }),
        timestamp: fc.constantFrom(...stamps),
        text: fc.string({ maxLength: 6 }),
      })
      const clear = fc.record({
        kind: fc.constant('deleteMessages' as const),
        session: fc.integer({ min: 0, max: 1 }),
      })
      const read = fc.record({
        kind: fc.constant('read' as const),
        session: fc.integer({ min: 0, max: 1 }),
        // afterSeq is left out half of the time, so that ranges often hold more than `limit`.
        afterSeq: fc.option(fc.integer({ min: -1, max: 13 }), { nil: undefined, freq: 2 }),
        beforeSeq: fc.option(fc.integer({ min: 0, max: 14 }), { nil: undefined }),
        limit: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
      })
      await checkRandomized(
        check,
        fc.array(fc.oneof(save, save, save, clear, read, read), { minLength: 1, maxLength: 40 }),
        async (operations) => {
          // Fresh sessions per run in the rule's own store; the reference starts empty too.
          const run = runs++
          const sessions = [`rand-${run}-a`, `rand-${run}-b`]
          const reference = new InMemoryPersister()
          for (const id of sessions) {
            await persister.saveSession(minimalSession(id))
            await reference.saveSession(minimalSession(id))
          }
          const step = new RuleCheck('P-MSG-026')
          for (const [index, op] of operations.entries()) {
            const session = sessions[op.session]!
            if (op.kind === 'save') {
              const message: AnyMessage = textMessage(session, op.seq, {
                id: op.id,
                timestamp: op.timestamp,
                content: op.text,
              })
              step.equal(
                await outcome(() => persister.saveMessage(session, message)),
                await outcome(() => reference.saveMessage(session, message)),
                `operation ${index}: saveMessage(${op.id} at seq ${op.seq}) outcome`,
              )
            } else if (op.kind === 'deleteMessages') {
              await persister.deleteMessages(session)
              await reference.deleteMessages(session)
            } else {
              const query: GetMessagesQuery = {
                ...(op.afterSeq === undefined ? {} : { afterSeq: op.afterSeq }),
                ...(op.beforeSeq === undefined ? {} : { beforeSeq: op.beforeSeq }),
                ...(op.limit === undefined ? {} : { limit: op.limit }),
              }
              step.deepEqual(
                await persister.getMessages(session, query),
                await reference.getMessages(session, query),
                `operation ${index}: getMessages(${JSON.stringify(query)})`,
              )
            }
          }
          for (const session of sessions) {
            step.deepEqual(
              await persister.getMessages(session),
              await reference.getMessages(session),
              'every message at the end',
            )
          }
        },
        { numRuns: 25 },
      )
    },
  }),
]

/** `ok` or the error code a call rejected with. */
async function outcome(call: () => Promise<unknown>): Promise<string> {
  try {
    await call()
    return 'ok'
  } catch (error) {
    return isAgentError(error) ? error.code : `non-AgentError: ${String(error)}`
  }
}

/** Exported for P-MSG-002: random message sets whose ids and timestamps disagree with seq order. */
export function shuffledMessages(): fc.Arbitrary<{ ids: string[]; stamps: string[]; order: number[] }> {
  return fc.integer({ min: 2, max: 12 }).chain((count) =>
    fc.record({
      ids: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 }), { minLength: count, maxLength: count }),
      stamps: fc.array(
        fc
          .integer({ min: 0, max: 5 })
          .map((offset) => new Date(Date.UTC(2026, 0, 1) + offset * 1000).toISOString()),
        { minLength: count, maxLength: count },
      ),
      order: fc.shuffledSubarray(
        Array.from({ length: count }, (_, index) => index),
        { minLength: count, maxLength: count },
      ),
    }),
  )
}
