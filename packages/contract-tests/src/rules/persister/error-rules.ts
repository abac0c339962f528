import { type AnyMessage, isAgentError, type SessionData } from '@agentx/core'
import type { RuleCheck } from '../../engine/rule-check.js'
import { definePersisterRule, type PersisterRule } from './define-persister-rule.js'
import { minimalSession, textMessage } from './persister-fixtures.js'

const group = 'Errors'

function cyclic(): Record<string, unknown> {
  const value: Record<string, unknown> = { name: 'loop' }
  value.self = value
  return value
}

/** Values JSON cannot hold faithfully; each must be rejected with VALIDATION. */
function unserialisable(): Array<[string, unknown]> {
  return [
    ['a cycle', cyclic()],
    ['a function', { run: () => 1 }],
    ['a bigint', { big: 10n }],
    ['a symbol', { sym: Symbol('s') }],
    ['NaN', { n: Number.NaN }],
    ['Infinity', { n: Number.POSITIVE_INFINITY }],
  ]
}

/** Saves that must reject with VALIDATION; asserts each does and that nothing was written. */
async function expectAllInvalid(
  cases: Array<[string, () => Promise<unknown>]>,
  check: RuleCheck,
): Promise<void> {
  for (const [what, save] of cases) await check.rejectsWithCode(save, 'VALIDATION', what)
}

/** Rules P-ERR-*: typed errors and input validation. */
export const errorRules: PersisterRule[] = [
  definePersisterRule({
    id: 'P-ERR-001',
    level: 'MUST',
    group,
    title: 'errors are AgentErrors with a stable string code and a boolean retryable',
    hint: 'Throw the errors of @agentx/core (NotFoundError, ValidationError, PersistenceError) and wrap driver errors as `cause`.',
    async check(context, check) {
      const errors: Array<[string, unknown]> = []
      const capture = async (what: string, action: () => Promise<unknown>): Promise<void> => {
        try {
          await action()
          errors.push([what, 'resolved'])
        } catch (error) {
          errors.push([what, error])
        }
      }
      await capture('NOT_FOUND', () => context.persister.saveMessage('missing', textMessage('missing', 0)))
      await capture('VALIDATION', () => context.persister.saveSession(minimalSession('')))
      const closable = await context.create()
      if (closable.close) {
        await closable.close()
        await capture('CLOSED', () => closable.getAllSessions())
      }
      for (const [code, error] of errors) {
        if (!isAgentError(error)) {
          return check.fail(`the ${code} error is not an AgentError (isAgentError is false)`, {
            expected: 'an AgentError',
            actual: error instanceof Error ? `${error.name}: ${error.message}` : error,
          })
        }
        check.ok(error instanceof Error, `the ${code} error is not an Error instance`)
        check.equal(error.code, code, `code of the ${code} error`)
        check.equal(error.retryable, false, `retryable of the ${code} error`)
        check.ok(
          typeof error.message === 'string' && error.message.length > 0,
          `the ${code} error has no message`,
        )
      }
    },
  }),
  definePersisterRule({
    id: 'P-ERR-002',
    level: 'MUST',
    group,
    title: 'an invalid session rejects with VALIDATION and writes nothing',
    hint: 'Call validateSessionData from @agentx/core before writing.',
    async check({ persister }, check) {
      const invalid = (what: string, value: unknown): [string, () => Promise<unknown>] => [
        `saveSession with ${what}`,
        () => persister.saveSession(value as SessionData),
      ]
      const { id: _id, ...withoutId } = minimalSession('x')
      await expectAllInvalid(
        [
          invalid('an empty id', minimalSession('')),
          invalid('no id', withoutId),
          invalid('a numeric id', { ...minimalSession('x'), id: 42 }),
          invalid('a createdAt that is not a timestamp', minimalSession('x', { createdAt: 'yesterday' })),
          invalid('an unknown state', { ...minimalSession('x'), state: 'sleeping' }),
          invalid('no tokenUsage', { ...minimalSession('x'), tokenUsage: undefined }),
          invalid('a summary that is not a string', { ...minimalSession('x'), summary: 7 }),
          invalid('null', null),
        ],
        check,
      )
      check.deepEqual(await persister.getAllSessions(), [], 'sessions after the rejected saves')
    },
  }),
  definePersisterRule({
    id: 'P-ERR-003',
    level: 'MUST',
    group,
    title: 'an invalid message rejects with VALIDATION and writes nothing',
    hint: 'Call validateMessage from @agentx/core before writing.',
    async check({ persister }, check) {
      await persister.saveSession(minimalSession('target'))
      const invalid = (
        what: string,
        value: unknown,
        sessionId = 'target',
      ): [string, () => Promise<unknown>] => [
        `saveMessage with ${what}`,
        () => persister.saveMessage(sessionId, value as AnyMessage),
      ]
      const { id: _id, ...withoutId } = textMessage('target', 0)
      await expectAllInvalid(
        [
          invalid('an empty sessionId argument', textMessage('', 0), ''),
          invalid('an empty message id', textMessage('target', 0, { id: '' })),
          invalid('no message id', withoutId),
          invalid('seq -1', textMessage('target', -1)),
          invalid('seq 1.5', textMessage('target', 1.5)),
          invalid("seq '1'", { ...textMessage('target', 0), seq: '1' }),
          invalid("type 'robot'", { ...textMessage('target', 0), type: 'robot' }),
          invalid('numeric content', { ...textMessage('target', 0), content: 42 }),
          invalid("timestamp 'now'", textMessage('target', 0, { timestamp: 'now' })),
          invalid('null', null),
        ],
        check,
      )
      check.deepEqual(await persister.getMessages('target'), [], 'messages after the rejected saves')
    },
  }),
  definePersisterRule({
    id: 'P-ERR-004',
    level: 'MUST',
    group,
    title: 'content or metadata that JSON cannot hold (cycle, function, bigint, NaN) rejects with VALIDATION',
    hint: 'JSON.stringify silently drops functions and turns NaN into null: copy with cloneJson from @agentx/core instead.',
    async check({ persister }, check) {
      await persister.saveSession(minimalSession('target'))
      const cases: Array<[string, () => Promise<unknown>]> = []
      for (const [what, value] of unserialisable()) {
        cases.push([
          `message content with ${what}`,
          () =>
            persister.saveMessage(
              'target',
              textMessage('target', 0, { content: [{ type: 'tool_use', id: 't', name: 'n', input: value }] }),
            ),
        ])
        cases.push([
          `message metadata with ${what}`,
          () =>
            persister.saveMessage(
              'target',
              textMessage('target', 1, { metadata: value as Record<string, unknown> }),
            ),
        ])
        cases.push([
          `session metadata with ${what}`,
          () =>
            persister.saveSession(minimalSession('other', { metadata: value as Record<string, unknown> })),
        ])
      }
      await expectAllInvalid(cases, check)
      check.deepEqual(await persister.getMessages('target'), [], 'messages after the rejected saves')
      check.deepEqual(
        (await persister.getAllSessions()).map((s) => s.id),
        ['target'],
        'sessions after the rejected saves',
      )
    },
  }),
  definePersisterRule({
    id: 'P-ERR-005',
    level: 'SHOULD',
    group,
    title: 'a message whose sessionId differs from the session it is saved into rejects with VALIDATION',
    hint: 'validateMessage(sessionId, message) from @agentx/core checks this.',
    async check({ persister }, check) {
      await persister.saveSession(minimalSession('a'))
      await persister.saveSession(minimalSession('b'))
      await check.rejectsWithCode(
        () => persister.saveMessage('a', textMessage('b', 0)),
        'VALIDATION',
        "saveMessage('a', message of session 'b')",
      )
      check.deepEqual(await persister.getMessages('a'), [], "messages of 'a'")
      check.deepEqual(await persister.getMessages('b'), [], "messages of 'b'")
    },
  }),
  definePersisterRule({
    id: 'P-ERR-006',
    level: 'MUST',
    group,
    title: 'listSessions with an invalid limit or offset rejects with VALIDATION',
    hint: 'Validate with validatePaging from @agentx/core.',
    async check({ persister }, check) {
      await persister.saveSession(minimalSession('one'))
      for (const query of [{ limit: -1 }, { limit: 2.5 }, { offset: -3 }, { offset: Number.NaN }]) {
        await check.rejectsWithCode(
          () => persister.listSessions(query),
          'VALIDATION',
          `listSessions(${JSON.stringify(query)})`,
        )
      }
    },
  }),
  definePersisterRule({
    id: 'P-ERR-007',
    level: 'MUST',
    group,
    title:
      'a field of the wrong shape rejects with VALIDATION and writes nothing: a timestamp not in UTC, metadata that is not an object, a malformed usage, an unknown stopReason, a content block without its fields, a session that is its own parent',
    hint: 'validateSessionData and validateMessage (or checkMessage) of @agentx/core check every field; timestamps are ordered as text, so only UTC (…Z) keeps them in time order.',
    async check({ persister }, check) {
      await persister.saveSession(minimalSession('target'))
      const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 }
      const session = (what: string, fields: Record<string, unknown>): [string, () => Promise<unknown>] => [
        `saveSession with ${what}`,
        () => persister.saveSession({ ...minimalSession('other'), ...fields } as SessionData),
      ]
      const message = (what: string, fields: Record<string, unknown>): [string, () => Promise<unknown>] => [
        `saveMessage with ${what}`,
        () => persister.saveMessage('target', { ...textMessage('target', 0), ...fields } as AnyMessage),
      ]
      await expectAllInvalid(
        [
          session('a createdAt with a UTC offset', { createdAt: '2026-01-02T05:04:05.678+02:00' }),
          session('a lastActivity without a time', { lastActivity: '2026-01-02' }),
          session('a lastActivity on a day that does not exist', {
            lastActivity: '2026-02-30T00:00:00.000Z',
          }),
          session('string metadata', { metadata: 'tags' }),
          session('metadata null', { metadata: null }),
          session('a tokenUsage count that is a string', { tokenUsage: { ...usage, inputTokens: '1' } }),
          session('itself as its parent', { parentSessionId: 'other' }),
          message('a timestamp with a UTC offset', { timestamp: '2026-01-02T05:04:05.678+02:00' }),
          message('metadata null', { metadata: null }),
          message('a usage without totalTokens', {
            type: 'agent',
            usage: { inputTokens: 1, outputTokens: 1 },
          }),
          message("stopReason 'finished'", { type: 'agent', stopReason: 'finished' }),
          message("incomplete 'yes'", { type: 'agent', incomplete: 'yes' }),
          message('a null content block', { content: [null] }),
          message('a text block without text', { content: [{ type: 'text' }] }),
          message('a tool call without an id', {
            type: 'agent',
            content: [{ type: 'tool_use', name: 'n', input: {} }],
          }),
        ],
        check,
      )
      check.deepEqual(await persister.getMessages('target'), [], 'messages after the rejected saves')
      check.deepEqual(
        (await persister.getAllSessions()).map((s) => s.id),
        ['target'],
        'sessions after the rejected saves',
      )
    },
  }),
]
