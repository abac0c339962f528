import type { AgentPersister, AnyMessage, ContentBlock } from '@agentx/core'
import { RuleCheck } from '../../engine/rule-check.js'
import { definePersisterRule, type PersisterRule } from './define-persister-rule.js'
import { shuffledMessages } from './message-v2-rules.js'
import { checkRandomized } from './randomized-check.js'
import { asJson, minimalSession, richMessages, textMessage } from './persister-fixtures.js'

const group = 'Messages'

/** Saves one session `id` and returns the persister, for brevity. */
async function withSession(persister: AgentPersister, id: string): Promise<AgentPersister> {
  await persister.saveSession(minimalSession(id))
  return persister
}

/**
 * Saves `message`; the persister may reject text it cannot hold with `VALIDATION` (and then must
 * have written nothing), otherwise it must return it exactly.
 */
async function roundTripOrReject(
  persister: AgentPersister,
  message: AnyMessage,
  check: RuleCheck,
  what: string,
): Promise<void> {
  let rejection: unknown
  try {
    await persister.saveMessage(message.sessionId, message)
  } catch (error) {
    rejection = error
  }
  if (rejection === undefined) {
    check.deepEqual(await persister.getMessages(message.sessionId), [asJson(message)], `${what}: read back`)
    return
  }
  await check.rejectsWithCode(() => Promise.reject(rejection), 'VALIDATION', `saveMessage with ${what}`)
  check.deepEqual(await persister.getMessages(message.sessionId), [], `${what}: messages after the rejection`)
}

const UNICODE_SAMPLES: readonly string[] = [
  'family 👨‍👩‍👧‍👦 flag 🇺🇦 skin 👋🏽',
  'astral 𝄞 𠜎 𝕏',
  'RTL مرحبا بالعالم \u200f שלום',
  '\ufeffstarts with a BOM',
  'combining e\u0301 vs \u00e9, Hangul \u1100\u1161 vs \uac00',
  'separators \u2028 \u2029 and controls \u0001\u001f\u007f',
  'quotes \' " ` and backslash \\ and \\u0000 as text',
]

/** Rules P-MSG-*: saving and reading messages. */
export const messageRules: PersisterRule[] = [
  definePersisterRule({
    id: 'P-MSG-001',
    level: 'MUST',
    group,
    title: 'save then getMessages returns deep-equal copies of every message type and block',
    hint: 'Store content blocks, usage, stopReason, incomplete and metadata exactly as given.',
    async check({ persister }, check) {
      await withSession(persister, 'rich')
      const messages = richMessages('rich')
      for (const message of messages)
        await check.resolves(() => persister.saveMessage('rich', message), 'saveMessage')
      check.deepEqual(await persister.getMessages('rich'), messages, 'getMessages')
    },
  }),
  definePersisterRule({
    id: 'P-MSG-002',
    level: 'MUST',
    group,
    title: 'messages come back in seq order, whatever the insertion order, ids or timestamps',
    hint: 'ORDER BY seq; never by insertion, id or timestamp.',
    async check({ persister }, check) {
      let run = 0
      await checkRandomized(
        check,
        shuffledMessages(),
        async ({ ids, stamps, order }) => {
          const session = `order-${run++}`
          await withSession(persister, session)
          const messages = ids.map((id, seq) => textMessage(session, seq, { id, timestamp: stamps[seq]! }))
          for (const seq of order) await persister.saveMessage(session, messages[seq]!)
          new RuleCheck('P-MSG-002').deepEqual(
            (await persister.getMessages(session)).map((m) => m.id),
            ids,
            'ids in the order getMessages returned them (listed in seq order)',
          )
        },
        { numRuns: 30 },
      )
    },
  }),
  definePersisterRule({
    id: 'P-MSG-003',
    level: 'MUST',
    group,
    title: 'upsert keeps position',
    hint: 'Saving an existing message id replaces it in place (the kernel rewrites checkpoints of a streaming reply).',
    async check({ persister }, check) {
      await withSession(persister, 'upsert')
      const messages = [0, 1, 2].map((seq) => textMessage('upsert', seq))
      for (const message of messages) await persister.saveMessage('upsert', message)
      const partial = textMessage('upsert', 1, { type: 'agent', content: 'partial', incomplete: true })
      await persister.saveMessage('upsert', partial)
      const final = textMessage('upsert', 1, {
        type: 'agent',
        content: [{ type: 'text', text: 'final reply' }],
        stopReason: 'end_turn',
      })
      await persister.saveMessage('upsert', final)
      check.deepEqual(
        await persister.getMessages('upsert'),
        [messages[0], final, messages[2]],
        'messages after upserts',
      )
    },
  }),
  definePersisterRule({
    id: 'P-MSG-004',
    level: 'MUST',
    group,
    title: 'an identical re-save of a message is a no-op',
    async check({ persister }, check) {
      await withSession(persister, 'idem')
      const message = richMessages('idem')[2]!
      await persister.saveMessage('idem', message)
      await persister.saveMessage('idem', message)
      await persister.saveMessage('idem', structuredClone(message))
      check.deepEqual(
        await persister.getMessages('idem'),
        [message],
        'messages after saving one message 3 times',
      )
    },
  }),
  definePersisterRule({
    id: 'P-MSG-005',
    level: 'MUST',
    group,
    title: 'getMessages of an unknown session is []',
    hint: 'Resolve to an empty array; do not reject.',
    async check({ persister }, check) {
      check.deepEqual(
        await check.resolves(() => persister.getMessages('ghost'), 'getMessages'),
        [],
        'empty store',
      )
      await withSession(persister, 'real')
      await persister.saveMessage('real', textMessage('real', 0))
      check.deepEqual(await persister.getMessages('ghost'), [], 'unknown session beside a real one')
    },
  }),
  definePersisterRule({
    id: 'P-MSG-006',
    level: 'MUST',
    group,
    title: 'the same message id in two sessions never mixes',
    hint: 'Key messages by (session_id, id), or reject the second save with CONFLICT; never move or overwrite the first.',
    async check({ persister }, check) {
      await withSession(persister, 'left')
      await withSession(persister, 'right')
      const inLeft = textMessage('left', 0, { id: 'shared-id', content: 'left content' })
      const inRight = textMessage('right', 0, { id: 'shared-id', content: 'right content' })
      await persister.saveMessage('left', inLeft)
      let rejected = false
      try {
        await persister.saveMessage('right', inRight)
      } catch (error) {
        rejected = true
        await check.rejectsWithCode(
          () => Promise.reject(error),
          ['CONFLICT', 'VALIDATION'],
          'saving a taken id elsewhere',
        )
      }
      check.deepEqual(await persister.getMessages('left'), [inLeft], "the first session's messages")
      check.deepEqual(
        await persister.getMessages('right'),
        rejected ? [] : [inRight],
        "the second session's messages",
      )
      await persister.deleteMessages('right')
      check.deepEqual(
        await persister.getMessages('left'),
        [inLeft],
        "the first session's messages after clearing the second",
      )
    },
  }),
  definePersisterRule({
    id: 'P-MSG-007',
    level: 'MUST',
    group,
    title: 'saveMessage into an unknown session rejects with NOT_FOUND and writes nothing',
    hint: 'Check the session exists (a foreign key) and throw NotFoundError from @agentx/core.',
    async check({ persister }, check) {
      const orphan = textMessage('nowhere', 0)
      await check.rejectsWithCode(() => persister.saveMessage('nowhere', orphan), 'NOT_FOUND', 'saveMessage')
      check.deepEqual(await persister.getMessages('nowhere'), [], 'messages of the unknown session')
      await persister.saveSession(minimalSession('nowhere'))
      check.deepEqual(await persister.getMessages('nowhere'), [], 'messages once the session is created')
      check.deepEqual(
        await persister.getAllSessions(),
        [minimalSession('nowhere')],
        'no session was created implicitly',
      )
    },
  }),
  definePersisterRule({
    id: 'P-MSG-008',
    level: 'MUST',
    group,
    title: 'JSON values in content, usage and metadata round-trip exactly',
    hint: 'Store JSON as text/JSONB, not as coerced columns; booleans stay booleans, 0.1 stays 0.1, -0 reads as 0.',
    async check({ persister }, check) {
      await withSession(persister, 'json')
      const values = {
        nested: [[1, [2, { deep: null }]], { list: [true, false, null] }],
        zero: 0,
        negative: -1,
        fraction: 0.1,
        tiny: 1e-7,
        huge: 1.7976931348623157e308,
        maxSafe: Number.MAX_SAFE_INTEGER,
        minSafe: Number.MIN_SAFE_INTEGER,
        negativeZero: -0,
        yes: true,
        no: false,
        nothing: null,
        emptyString: '',
        emptyArray: [],
        emptyObject: {},
        numericString: '007',
      }
      const message = textMessage('json', 0, {
        type: 'agent',
        content: [{ type: 'tool_use', id: 'call-1', name: 'calc', input: values }],
        usage: {
          inputTokens: 0,
          outputTokens: Number.MAX_SAFE_INTEGER,
          totalTokens: Number.MAX_SAFE_INTEGER,
        },
        metadata: values,
      })
      await persister.saveMessage('json', message)
      const [stored] = await persister.getMessages('json')
      check.deepEqual(stored, asJson(message), 'the message read back')
      check.equal(
        (stored?.metadata as { negativeZero?: number } | undefined)?.negativeZero,
        0,
        'metadata.negativeZero',
      )
    },
  }),
  definePersisterRule({
    id: 'P-MSG-009',
    level: 'MUST',
    group,
    title: 'undefined properties are omitted and absent optional fields stay absent',
    hint: 'Never turn a missing property into null, false, 0 or "".',
    async check({ persister }, check) {
      await withSession(persister, 'sparse')
      const sparse = textMessage('sparse', 0)
      const withUndefined = textMessage('sparse', 1, {
        type: 'agent',
        content: [{ type: 'tool_use', id: 'c1', name: 'tool', input: { kept: 1, dropped: undefined } }],
        metadata: { kept: 'yes', dropped: undefined },
        usage: undefined,
      } as unknown as Partial<AnyMessage>)
      await persister.saveMessage('sparse', sparse)
      await persister.saveMessage('sparse', withUndefined)
      const [first, second] = await persister.getMessages('sparse')
      check.deepEqual(
        first ? Object.keys(first).sort() : first,
        Object.keys(sparse).sort(),
        'property names of a sparse message',
      )
      check.deepEqual(first, sparse, 'the sparse message')
      check.deepEqual(second, asJson(withUndefined), 'a message with undefined properties')
    },
  }),
  definePersisterRule({
    id: 'P-MSG-010',
    level: 'MUST',
    group,
    title: 'unicode text round-trips code unit for code unit, without normalisation',
    hint: 'Use UTF-8 storage without NFC/NFD normalisation; compare strings with === after reading.',
    async check({ persister }, check) {
      await withSession(persister, 'unicode')
      const message = textMessage('unicode', 0, {
        content: UNICODE_SAMPLES.map((text) => ({ type: 'text', text }) satisfies ContentBlock),
        metadata: Object.fromEntries(
          UNICODE_SAMPLES.map((text, index) => [`${text.slice(0, 8)}-${index}`, text]),
        ),
      })
      await persister.saveMessage('unicode', message)
      await persister.saveSession(minimalSession('unicode', { summary: UNICODE_SAMPLES.join(' | ') }))
      const [stored] = await persister.getMessages('unicode')
      check.deepEqual(stored, message, 'the unicode message')
      check.equal(
        (await persister.getSession('unicode'))?.summary,
        UNICODE_SAMPLES.join(' | '),
        'the unicode summary',
      )
    },
  }),
  definePersisterRule({
    id: 'P-MSG-011',
    level: 'MUST',
    group,
    title: 'NUL characters round-trip or are rejected with VALIDATION, never silently changed',
    hint: 'PostgreSQL text cannot hold U+0000: encode it (e.g. JSONB escape) or reject the write with VALIDATION.',
    async check({ persister }, check) {
      await withSession(persister, 'nul')
      const message = textMessage('nul', 0, {
        content: [{ type: 'text', text: 'before\u0000after' }],
        metadata: { 'key\u0000': 'value\u0000', plain: '\u0000' },
      })
      await roundTripOrReject(persister, message, check, 'NUL characters in text and keys')
      const plainText = textMessage('nul2', 0, { content: 'a\u0000b' })
      await withSession(persister, 'nul2')
      await roundTripOrReject(persister, plainText, check, 'a NUL character in string content')
    },
  }),
  definePersisterRule({
    id: 'P-MSG-012',
    level: 'MUST',
    group,
    title: 'lone surrogates round-trip or are rejected with VALIDATION, never silently changed',
    hint: 'UTF-8 encoders replace lone surrogates with U+FFFD: detect them (isWellFormed) and encode or reject.',
    async check({ persister }, check) {
      await withSession(persister, 'surrogate')
      const message = textMessage('surrogate', 0, {
        content: [
          { type: 'text', text: 'high \ud800 alone' },
          { type: 'text', text: 'low \udc00 alone' },
          { type: 'text', text: 'ends with \udbff' },
        ],
      })
      await roundTripOrReject(persister, message, check, 'lone surrogates')
    },
  }),
  definePersisterRule({
    id: 'P-MSG-013',
    level: 'MUST',
    group,
    title: 'hostile keys (__proto__, constructor, $gt, a.b) round-trip as data without prototype pollution',
    hint: 'Parse with JSON.parse or copy with defineProperty; never assign keys onto {} with obj[key] = value.',
    async check({ persister }, check) {
      await withSession(persister, 'hostile')
      const raw =
        '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"$gt":"","a.b":{"$where":"1"},"toString":"x","hasOwnProperty":1}'
      const hostile = (): Record<string, unknown> => JSON.parse(raw) as Record<string, unknown>
      const message = textMessage('hostile', 0, {
        content: [{ type: 'tool_use', id: 't', name: 'n', input: hostile() }],
        metadata: hostile(),
      })
      await persister.saveMessage('hostile', message)
      const [stored] = await persister.getMessages('hostile')
      check.deepEqual(stored, message, 'the message with hostile keys')
      check.ok(
        stored?.metadata && Object.hasOwn(stored.metadata, '__proto__'),
        '__proto__ is not an own data key',
        {
          actual: stored?.metadata,
        },
      )
      check.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype.polluted')
    },
  }),
  definePersisterRule({
    id: 'P-MSG-014',
    level: 'MUST',
    group,
    timeoutMs: 60_000,
    title: 'a 5 MB message round-trips exactly or is rejected with PAYLOAD_TOO_LARGE',
    hint: 'Check column size limits; a documented maximum must reject with PAYLOAD_TOO_LARGE and write nothing.',
    async check({ persister }, check) {
      await withSession(persister, 'big')
      const unit = 'Lorem ipsum ü € 𝄞 0123456789 '
      const text = unit.repeat(Math.ceil((5 * 1024 * 1024) / unit.length))
      const message = textMessage('big', 0, { type: 'agent', content: [{ type: 'text', text }] })
      let rejection: unknown
      try {
        await persister.saveMessage('big', message)
      } catch (error) {
        rejection = error
      }
      if (rejection !== undefined) {
        await check.rejectsWithCode(
          () => Promise.reject(rejection),
          'PAYLOAD_TOO_LARGE',
          'saving a 5 MB message',
        )
        check.deepEqual(await persister.getMessages('big'), [], 'messages after the rejection')
        return
      }
      const [stored] = await persister.getMessages('big')
      const storedText =
        Array.isArray(stored?.content) && stored.content[0]?.type === 'text'
          ? stored.content[0].text
          : undefined
      check.equal(storedText?.length, text.length, 'length of the stored text')
      check.ok(storedText === text, 'the 5 MB text differs from what was saved')
      check.deepEqual(stored, message, 'the 5 MB message')
    },
  }),
  definePersisterRule({
    id: 'P-MSG-015',
    level: 'MUST',
    group,
    title: "deleteMessages removes only that session's messages and keeps the session",
    async check({ persister }, check) {
      const session = minimalSession('clear', { summary: 'kept' })
      await persister.saveSession(session)
      await withSession(persister, 'bystander')
      for (let seq = 0; seq < 3; seq += 1) {
        await persister.saveMessage('clear', textMessage('clear', seq))
        await persister.saveMessage('bystander', textMessage('bystander', seq))
      }
      await check.resolves(() => persister.deleteMessages('clear'), 'deleteMessages')
      check.deepEqual(await persister.getMessages('clear'), [], 'messages of the cleared session')
      check.deepEqual(await persister.getSession('clear'), session, 'the cleared session itself')
      check.deepEqual(
        await persister.getMessages('bystander'),
        [0, 1, 2].map((seq) => textMessage('bystander', seq)),
        'messages of the other session',
      )
      const later = [1, 0].map((seq) => textMessage('clear', seq, { id: `later-${seq}` }))
      for (const message of later) await persister.saveMessage('clear', message)
      check.deepEqual(
        await persister.getMessages('clear'),
        [later[1], later[0]],
        'messages saved after clearing',
      )
      await check.resolves(
        () => persister.deleteMessages('no-such-session'),
        'deleteMessages of an unknown session',
      )
    },
  }),
  definePersisterRule({
    id: 'P-MSG-016',
    level: 'MUST',
    group,
    title: '50 parallel saves with distinct ids all land exactly once',
    hint: 'Concurrent writes must not lose updates (no read-modify-write of a whole list).',
    async check({ persister }, check) {
      await withSession(persister, 'parallel')
      const messages = Array.from({ length: 50 }, (_, seq) => textMessage('parallel', seq))
      await check.resolves(
        () => Promise.all(messages.map((message) => persister.saveMessage('parallel', message))),
        '50 parallel saveMessage calls',
      )
      const [first, second] = await Promise.all([
        persister.getMessages('parallel'),
        persister.getMessages('parallel'),
      ])
      check.deepEqual(first, messages, 'messages after 50 parallel saves')
      check.deepEqual(second, first, 'a concurrent second read')
    },
  }),
  definePersisterRule({
    id: 'P-MSG-017',
    level: 'MUST',
    group,
    title: '20 parallel saves of one message id leave exactly one message',
    hint: 'Upsert atomically (INSERT … ON CONFLICT DO UPDATE), not check-then-insert.',
    async check({ persister }, check) {
      await withSession(persister, 'race')
      const versions = Array.from({ length: 20 }, (_, index) =>
        textMessage('race', 0, { id: 'contested', type: 'agent', content: `version ${index}` }),
      )
      await check.resolves(
        () => Promise.all(versions.map((message) => persister.saveMessage('race', message))),
        '20 parallel saveMessage calls',
      )
      const stored = await persister.getMessages('race')
      check.equal(stored.length, 1, 'number of messages')
      check.ok(
        versions.some((version) => JSON.stringify(version) === JSON.stringify(stored[0])),
        'the stored message is none of the written versions',
        { actual: stored[0] },
      )
    },
  }),
  definePersisterRule({
    id: 'P-MSG-018',
    level: 'MUST',
    group,
    title: 'afterSeq and limit page through every message exactly once',
    hint: 'WHERE seq > afterSeq ORDER BY seq LIMIT limit.',
    async check({ persister }, check) {
      await withSession(persister, 'pages')
      const messages = Array.from({ length: 10 }, (_, seq) => textMessage('pages', seq))
      for (const seq of [9, 0, 5, 2, 7, 1, 8, 3, 6, 4]) await persister.saveMessage('pages', messages[seq]!)
      const seen: AnyMessage[] = []
      let afterSeq: number | undefined
      for (let guard = 0; guard < 12; guard += 1) {
        const page = await persister.getMessages(
          'pages',
          afterSeq === undefined ? { limit: 3 } : { afterSeq, limit: 3 },
        )
        check.ok(page.length <= 3, 'a page is larger than the limit', { actual: page.length })
        if (page.length === 0) break
        seen.push(...page)
        afterSeq = page.at(-1)!.seq
      }
      check.deepEqual(seen, messages, 'messages read in pages of 3')
      check.deepEqual(await persister.getMessages('pages', { afterSeq: 9 }), [], 'afterSeq at the last seq')
      check.deepEqual(
        await persister.getMessages('pages', { afterSeq: 6 }),
        messages.slice(7),
        'afterSeq 6 without limit',
      )
      check.deepEqual(
        await persister.getMessages('pages', { limit: 100 }),
        messages,
        'a limit larger than the count',
      )
    },
  }),
  definePersisterRule({
    id: 'P-MSG-019',
    level: 'MUST',
    group,
    title: 'getMessages limit 0 is [] and an invalid limit rejects with VALIDATION',
    hint: 'Validate with validatePaging from @agentx/core before querying.',
    async check({ persister }, check) {
      await withSession(persister, 'limits')
      await persister.saveMessage('limits', textMessage('limits', 0))
      check.deepEqual(await persister.getMessages('limits', { limit: 0 }), [], 'limit 0')
      for (const limit of [-1, 1.5, Number.NaN]) {
        await check.rejectsWithCode(
          () => persister.getMessages('limits', { limit }),
          'VALIDATION',
          `getMessages with limit ${limit}`,
        )
      }
    },
  }),
  definePersisterRule({
    id: 'P-MSG-020',
    level: 'MUST',
    group,
    title: 'providerMetadata on content blocks round-trips unchanged',
    hint: 'Provider data (signatures, item ids, cache hints) must survive storage for the next request.',
    async check({ persister }, check) {
      await withSession(persister, 'provider')
      const providerMetadata = {
        anthropic: { cacheControl: { type: 'ephemeral' } },
        openai: { itemId: 'msg_0123', encryptedContent: 'gAAAAABn…==' },
        gemini: { thoughtSignature: 'CiQBVKhc7r+/8Q==' },
      }
      const message = textMessage('provider', 0, {
        type: 'agent',
        content: [
          { type: 'text', text: 'hi', providerMetadata },
          { type: 'thinking', text: 'hmm', signature: 'sig', providerMetadata },
          { type: 'tool_use', id: 'call_1', name: 'f', input: {}, providerMetadata },
          { type: 'image', mediaType: 'image/png', data: 'AAAA', providerMetadata },
          {
            type: 'tool_result',
            toolUseId: 'call_1',
            content: [{ type: 'text', text: 'r', providerMetadata }],
            providerMetadata,
          },
        ],
      })
      await persister.saveMessage('provider', message)
      check.deepEqual(
        await persister.getMessages('provider'),
        [message],
        'the message with provider metadata',
      )
    },
  }),
  definePersisterRule({
    id: 'P-MSG-021',
    level: 'MUST',
    group,
    title: 'returned messages are copies and saveMessage neither mutates nor keeps its input',
    hint: 'Copy on write and on read.',
    async check({ persister }, check) {
      await withSession(persister, 'copies')
      const input = richMessages('copies')[2]!
      const snapshot = structuredClone(input)
      await persister.saveMessage('copies', input)
      check.deepEqual(input, snapshot, 'the input after saveMessage')
      ;(input.content as Array<{ text?: string }>)[1]!.text = 'mutated input'
      const [read] = await persister.getMessages('copies')
      ;(read!.content as Array<{ text?: string }>)[1]!.text = 'mutated output'
      read!.usage!.inputTokens = -5
      check.deepEqual(
        await persister.getMessages('copies'),
        [snapshot],
        'stored message after mutating input and output',
      )
    },
  }),
  definePersisterRule({
    id: 'P-MSG-022',
    level: 'MUST',
    group,
    title: 'message timestamps round-trip as the same ISO string',
    hint: 'Keep the string, or format with toISOString(); never drop milliseconds or shift the zone.',
    async check({ persister }, check) {
      await withSession(persister, 'stamps')
      const stamps = ['1969-12-31T23:59:59.999Z', '2026-03-04T05:06:07.000Z', '2026-03-04T05:06:07.890Z']
      const messages = stamps.map((timestamp, seq) => textMessage('stamps', seq, { timestamp }))
      for (const message of messages) await persister.saveMessage('stamps', message)
      check.deepEqual(
        (await persister.getMessages('stamps')).map((m) => m.timestamp),
        stamps,
        'timestamps read back',
      )
    },
  }),
  definePersisterRule({
    id: 'P-MSG-023',
    level: 'SHOULD',
    group,
    title: 'a different message at an occupied seq rejects with CONFLICT and keeps the first',
    hint: 'A unique (session_id, seq) index; map its violation to PersistenceError code CONFLICT.',
    async check({ persister }, check) {
      await withSession(persister, 'seq')
      const first = textMessage('seq', 0, { id: 'first' })
      await persister.saveMessage('seq', first)
      await check.rejectsWithCode(
        () => persister.saveMessage('seq', textMessage('seq', 0, { id: 'second' })),
        'CONFLICT',
        'saving another id at seq 0',
      )
      check.deepEqual(await persister.getMessages('seq'), [first], 'messages after the conflict')
    },
  }),
]
