import type { AgentPersister, AnyMessage, SessionData } from '@agentx/core'
import type { StoreSnapshot } from './read-in-fresh-process.js'

const usage = { inputTokens: 120, outputTokens: 30, cacheReadTokens: 100, totalTokens: 150 }
const empty = { inputTokens: 0, outputTokens: 0, totalTokens: 0 }

const sessions: SessionData[] = [
  {
    id: 'previous-full',
    summary: 'Every field: ünïcødé 🧑‍💻 שלום',
    createdAt: '2025-10-01T00:00:00.001Z',
    lastActivity: '2025-12-24T18:30:00.999Z',
    cwd: '/srv/app',
    model: 'claude-sonnet-5-5',
    systemPrompt: 'You are terse.\nAlways.',
    state: 'completed',
    providerSessionId: 'resp_01HXYZ',
    tokenUsage: usage,
    userId: 'user-42',
    appName: 'support',
    metadata: { tags: ['a', 'b'], nested: { n: 0, neg: -1, f: 0.1, t: true, nil: null }, 'a.b': 1, $gt: 2 },
  },
  {
    id: 'previous-minimal',
    summary: '',
    createdAt: '1969-07-20T20:17:40.000Z',
    lastActivity: '1969-07-20T20:17:40.000Z',
    state: 'interrupted',
    tokenUsage: empty,
  },
  {
    id: 'previous / ? # % . $ \' " 😀',
    summary: "SQL-looking: '); DROP TABLE sessions; --",
    createdAt: '2025-11-03T09:15:00.000Z',
    lastActivity: '2025-11-03T09:20:41.512Z',
    state: 'error',
    tokenUsage: empty,
    appName: 'support',
    metadata: { note: 'NUL \u0000 inside' },
  },
]

const at = (second: number): string =>
  new Date(Date.parse('2025-12-24T18:00:00.000Z') + second * 1000).toISOString()

const messages: AnyMessage[] = [
  {
    id: 'm-0',
    sessionId: 'previous-full',
    seq: 0,
    type: 'user',
    content: 'Hello',
    timestamp: at(0),
    metadata: { source: 'web' },
  },
  {
    id: 'm-1',
    sessionId: 'previous-full',
    seq: 1,
    type: 'agent',
    content: [
      {
        type: 'thinking',
        text: 'hmm',
        signature: 'sig==',
        providerMetadata: { claude: { redacted: false } },
      },
      {
        type: 'tool_use',
        id: 'toolu_01',
        name: 'lookup',
        input: { q: 'weather', n: [1, 2, { deep: null }] },
      },
    ],
    timestamp: at(1),
    usage,
    stopReason: 'tool_use',
  },
  {
    id: 'm-2',
    sessionId: 'previous-full',
    seq: 2,
    type: 'tool',
    content: [
      {
        type: 'tool_result',
        toolUseId: 'toolu_01',
        content: [{ type: 'text', text: 'sunny' }],
        isError: false,
      },
    ],
    timestamp: at(2),
  },
  {
    id: 'm-3',
    sessionId: 'previous-full',
    seq: 3,
    type: 'agent',
    content: [{ type: 'text', text: 'It is sunny 🌞 — e\u0301, \ufeffBOM, NUL\u0000end' }],
    timestamp: at(3),
    usage,
    stopReason: 'max_tokens',
    incomplete: true,
  },
  {
    id: 'm-0',
    sessionId: 'previous / ? # % . $ \' " 😀',
    seq: 7,
    type: 'user',
    content: 'same id, other session',
    timestamp: at(7),
  },
]

/**
 * The data set of the migration rules (P-MIG-*): sessions and messages with only the fields of
 * the first AgentX release (no Storage v2 field), covering every one of them (optional fields
 * present and absent, unicode, NUL, pre-1970 timestamps, opaque ids, one message id in two
 * sessions). Sessions sorted by id; messages by session, in seq order.
 */
export const PREVIOUS_RELEASE_DATA: StoreSnapshot = Object.freeze({
  sessions: [...sessions].sort((a, b) => (a.id < b.id ? -1 : 1)),
  messages: Object.fromEntries(
    sessions.map((session) => [session.id, messages.filter((m) => m.sessionId === session.id)]),
  ),
})

/**
 * Saves {@link PREVIOUS_RELEASE_DATA} through `persister` — an instance of your persister's
 * previous release (install it under an alias, e.g. `"my-persister-1": "npm:my-persister@1"`) —
 * and resolves to what that release reads back, the expected result of the migration rules. Use it
 * in `migration.createPreviousStore`; it does not close `persister`.
 */
export async function writePreviousReleaseData(persister: AgentPersister): Promise<StoreSnapshot> {
  for (const session of PREVIOUS_RELEASE_DATA.sessions) await persister.saveSession(session)
  for (const list of Object.values(PREVIOUS_RELEASE_DATA.messages)) {
    for (const message of list) await persister.saveMessage(message.sessionId, message)
  }
  const read: Record<string, AnyMessage[]> = {}
  for (const id of Object.keys(PREVIOUS_RELEASE_DATA.messages)) read[id] = await persister.getMessages(id)
  const all = await persister.getAllSessions()
  return { sessions: all.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)), messages: read }
}
