import type { AgentPersister, AnyMessage, SessionData } from '@agentx/core'
import type { RuleCheck } from '../../engine/rule-check.js'
import { definePersisterRule, type PersisterRule } from './define-persister-rule.js'
import { asJson, fullSession, minimalSession, textMessage } from './persister-fixtures.js'

const group = 'Messages'

/**
 * Strings a store changes when one column is handled apart from the rest (a `TEXT` column with a
 * size limit, a normalising collation, a driver that encodes one field as UTF-8 bytes).
 */
const EXACT_SAMPLES: readonly string[] = [
  'combining e\u0301 vs \u00e9, Hangul \u1100\u1161 vs \uac00, \u212b vs \u00c5',
  'family 👨‍👩‍👧‍👦 astral 𝄞 RTL مرحبا \u200f and a \ufeffBOM',
  '  leading and trailing space, tab\t, CR\r\n and a final newline\n',
  // 100 000 code units: over the 64 KiB of a MySQL TEXT or a common VARCHAR cap.
  'ü€𝄞 0123456789 '.repeat(6_250),
]

/** Strings a store may refuse with VALIDATION (PostgreSQL text has no NUL; UTF-8 has no lone surrogate), never change. */
const RISKY_SAMPLES: readonly string[] = ['before\u0000after', 'lone \ud800 high and \udc00 low']

/** A message whose every kind of string field holds `text`. */
function messagesHolding(sessionId: string, text: string): AnyMessage[] {
  return [
    textMessage(sessionId, 0, { content: text, metadata: { note: text, [`key ${text.slice(0, 40)}`]: 1 } }),
    textMessage(sessionId, 1, {
      type: 'agent',
      content: [
        { type: 'thinking', text, signature: text },
        { type: 'tool_use', id: 'call-1', name: 'echo', input: { text, list: [text] } },
      ],
      stopReason: 'tool_use',
    }),
    textMessage(sessionId, 2, {
      type: 'tool',
      content: [
        { type: 'tool_result', toolUseId: 'call-1', content: text },
        { type: 'tool_result', toolUseId: 'call-2', content: [{ type: 'text', text }], isError: true },
      ],
    }),
    textMessage(sessionId, 3, { type: 'system', content: text }),
  ]
}

/** A session whose every free-text field holds `text`. */
function sessionHolding(id: string, text: string): SessionData {
  return fullSession(id, {
    summary: text,
    systemPrompt: text,
    cwd: text,
    model: text,
    metadata: { note: text },
  })
}

/** Saves `session` and `messages`; each must read back exactly, or be refused with VALIDATION and leave nothing. */
async function roundTripOrRefuse(
  persister: AgentPersister,
  session: SessionData,
  messages: readonly AnyMessage[],
  check: RuleCheck,
  what: string,
): Promise<void> {
  let refused: unknown
  try {
    await persister.saveSession(session)
  } catch (error) {
    refused = error
  }
  if (refused !== undefined) {
    await check.rejectsWithCode(() => Promise.reject(refused), 'VALIDATION', `saveSession with ${what}`)
    check.equal(await persister.getSession(session.id), null, `the session after refusing ${what}`)
    // The messages still need a session to go into.
    await persister.saveSession(minimalSession(session.id))
  } else {
    check.deepEqual(await persister.getSession(session.id), asJson(session), `the session with ${what}`)
  }
  for (const message of messages) {
    let rejection: unknown
    try {
      await persister.saveMessage(session.id, message)
    } catch (error) {
      rejection = error
    }
    const [stored] = await persister.getMessages(session.id, { afterSeq: message.seq - 1, limit: 1 })
    if (rejection === undefined) {
      check.deepEqual(stored, asJson(message), `${message.type} message seq ${message.seq} with ${what}`)
    } else {
      await check.rejectsWithCode(
        () => Promise.reject(rejection),
        'VALIDATION',
        `saveMessage of the ${message.type} message seq ${message.seq} with ${what}`,
      )
      check.equal(stored, undefined, `the ${message.type} message seq ${message.seq} after refusing ${what}`)
    }
  }
}

/** Rules P-MSG-027 … P-MSG-028: every field of a message or session, not only text blocks. */
export const messageStringRules: PersisterRule[] = [
  definePersisterRule({
    id: 'P-MSG-027',
    level: 'MUST',
    group,
    title:
      'every string field (string content, tool results, thinking, input, metadata, summary, systemPrompt) round-trips exactly',
    hint: 'Give every string column the storage of text blocks: no size cap under 100 000 characters, no normalisation or trimming; NUL and lone surrogates round-trip or are refused with VALIDATION.',
    async check({ persister }, check) {
      for (const [index, text] of EXACT_SAMPLES.entries()) {
        const id = `exact-${index}`
        const session = sessionHolding(id, text)
        await check.resolves(() => persister.saveSession(session), `saveSession with sample ${index}`)
        check.deepEqual(await persister.getSession(id), session, `the session with sample ${index}`)
        const messages = messagesHolding(id, text)
        for (const message of messages) {
          await check.resolves(
            () => persister.saveMessage(id, message),
            `saveMessage of the ${message.type} message with sample ${index}`,
          )
        }
        check.deepEqual(await persister.getMessages(id), messages, `the messages with sample ${index}`)
      }
      for (const [index, text] of RISKY_SAMPLES.entries()) {
        const id = `risky-${index}`
        await roundTripOrRefuse(
          persister,
          sessionHolding(id, text),
          messagesHolding(id, text),
          check,
          index === 0 ? 'a NUL character' : 'lone surrogates',
        )
      }
    },
  }),
  definePersisterRule({
    id: 'P-MSG-028',
    level: 'MUST',
    group,
    title: 'false and zero values of optional fields stay false and zero, never absent',
    hint: 'Store `incomplete: false`, `isError: false` and zero counts as given: only an absent field is absent.',
    async check({ persister }, check) {
      await persister.saveSession(minimalSession('falsy', { summary: '', metadata: {} }))
      const messages = [
        textMessage('falsy', 0, {
          type: 'agent',
          content: [{ type: 'text', text: '' }],
          incomplete: false,
          usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, totalTokens: 0 },
          metadata: {},
        }),
        textMessage('falsy', 1, {
          type: 'tool',
          content: [{ type: 'tool_result', toolUseId: 'call-0', content: '', isError: false }],
        }),
        textMessage('falsy', 2, { content: '' }),
      ]
      for (const message of messages) {
        await check.resolves(() => persister.saveMessage('falsy', message), `saveMessage seq ${message.seq}`)
      }
      check.deepEqual(await persister.getMessages('falsy'), messages, 'the messages read back')
      check.deepEqual(
        await persister.getSession('falsy'),
        minimalSession('falsy', { summary: '', metadata: {} }),
        'the session read back',
      )
    },
  }),
]
