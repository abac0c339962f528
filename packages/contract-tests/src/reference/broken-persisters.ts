import {
  type AgentPersister,
  type AnyMessage,
  compareByActivity,
  type GetMessagesQuery,
  isAgentError,
  type DeleteSessionsQuery,
  type ListSessionsQuery,
  NotFoundError,
  PersistenceError,
  type SessionData,
  type SessionScope,
  ValidationError,
  validateClaimArguments,
  validateReleaseArguments,
} from '@agentx/core'
import { DelegatingPersister } from './delegating-persister.js'

/**
 * A deliberately broken persister: the reference persister with exactly one defect. The kit's
 * meta-test runs every rule against every variant to prove the rules catch real bugs.
 */
export interface BrokenPersisterVariant {
  /** Short kebab-case name, e.g. `drops-order`. */
  readonly name: string
  /** The defect, in words. */
  readonly defect: string
  /** Rule ids that must fail for this variant. */
  readonly catches: readonly string[]
  /** Wraps a correct persister into the broken one. */
  wrap(inner: AgentPersister): AgentPersister
  /**
   * How its storage behaves across `create()`/`reopen()`: `shared` (every `create()` sees the same
   * data), `forgotten` (reopen loses everything), `memory-only` (reopen in this process finds the
   * data, a fresh process does not). Default is correct (isolated, durable).
   */
  readonly storage?: 'shared' | 'forgotten' | 'memory-only'
}

/** Deep-maps every string (values and, when `keys`, property names) of JSON-like data. */
function mapStrings(value: unknown, map: (text: string) => string, keys = false): unknown {
  if (typeof value === 'string') return map(value)
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, map, keys))
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) {
      Object.defineProperty(out, keys ? map(key) : key, {
        value: mapStrings(item, map, keys),
        enumerable: true,
        writable: true,
        configurable: true,
      })
    }
    return out
  }
  return value
}

function mapValues(value: unknown, map: (item: unknown) => unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => mapValues(item, map))
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapValues(item, map)]))
  }
  return map(value)
}

/** Whether a value given to `transformingWrites` is a message (else it is a session). */
function isMessage(value: unknown): value is AnyMessage {
  return typeof value === 'object' && value !== null && 'seq' in value && 'content' in value
}

/** A persister whose saves pass every session and message through `transform` first. */
function transformingWrites(inner: AgentPersister, transform: (value: unknown) => unknown): AgentPersister {
  return new (class extends DelegatingPersister {
    override async saveSession(session: SessionData): Promise<void> {
      return this.inner.saveSession(transform(session) as SessionData)
    }
    override async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
      return this.inner.saveMessage(sessionId, transform(message) as AnyMessage)
    }
  })(inner)
}

/** The "helpful" repairs of the `repairs-loose-fields` variant: what P-ERR-007 says to refuse. */
function repairLooseFields(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) }
  for (const key of ['createdAt', 'lastActivity', 'timestamp']) {
    const text = out[key]
    if (typeof text === 'string' && !Number.isNaN(Date.parse(text))) out[key] = new Date(text).toISOString()
  }
  if (out.metadata !== undefined && (typeof out.metadata !== 'object' || out.metadata === null))
    delete out.metadata
  if (out.parentSessionId === out.id) delete out.parentSessionId
  for (const key of ['tokenUsage', 'usage']) {
    const usage = out[key] as Record<string, unknown> | undefined
    if (typeof usage !== 'object' || usage === null) continue
    const input = Number(usage.inputTokens) || 0
    const output = Number(usage.outputTokens) || 0
    out[key] = {
      ...usage,
      inputTokens: input,
      outputTokens: output,
      totalTokens: Number(usage.totalTokens) || input + output,
    }
  }
  if (
    out.stopReason !== undefined &&
    typeof out.stopReason === 'string' &&
    !STOP_REASONS.includes(out.stopReason)
  ) {
    out.stopReason = 'other'
  }
  if (out.incomplete !== undefined) out.incomplete = Boolean(out.incomplete)
  if (Array.isArray(out.content)) {
    out.content = out.content.map((block: unknown) => {
      const fields = typeof block === 'object' && block !== null ? (block as Record<string, unknown>) : {}
      if (fields.type === 'tool_use') return { ...fields, id: fields.id ?? '', name: fields.name ?? '' }
      return fields.type === undefined || fields.type === 'text'
        ? { type: 'text', ...fields, text: fields.text ?? '' }
        : fields
    })
  }
  return out
}

const STOP_REASONS: readonly string[] = [
  'end_turn',
  'max_tokens',
  'tool_use',
  'content_filter',
  'aborted',
  'error',
  'other',
]

/** A persister whose ids (session and message session ids) pass through `normalise`. */
function normalisingIds(inner: AgentPersister, normalise: (id: string) => string): AgentPersister {
  const fix = (id: string): string => (typeof id === 'string' ? normalise(id) : id)
  return new (class extends DelegatingPersister {
    override async saveSession(session: SessionData): Promise<void> {
      return this.inner.saveSession({ ...session, id: fix(session.id) })
    }
    override async getSession(id: string): Promise<SessionData | null> {
      return this.inner.getSession(fix(id))
    }
    override async deleteSession(id: string): Promise<void> {
      return this.inner.deleteSession(fix(id))
    }
    override async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
      return this.inner.saveMessage(fix(sessionId), { ...message, sessionId: fix(message.sessionId) })
    }
    override async getMessages(sessionId: string, query?: GetMessagesQuery): Promise<AnyMessage[]> {
      return this.inner.getMessages(fix(sessionId), query)
    }
    override async deleteMessages(sessionId: string): Promise<void> {
      return this.inner.deleteMessages(fix(sessionId))
    }
  })(inner)
}

const OPTIONAL_SESSION_FIELDS = [
  'cwd',
  'model',
  'systemPrompt',
  'providerSessionId',
  'userId',
  'appName',
  'metadata',
]
const OPTIONAL_MESSAGE_FIELDS = ['usage', 'stopReason', 'incomplete', 'metadata']

function withNulls<T extends object>(value: T, fields: readonly string[]): T {
  const out = { ...value } as Record<string, unknown>
  for (const field of fields) if (!(field in out)) out[field] = null
  return out as T
}

function secondsOnly(timestamp: string): string {
  return new Date(Math.floor(Date.parse(timestamp) / 1000) * 1000).toISOString()
}

/** Every broken variant of the reference persister, one defect each. */
export const brokenPersisterVariants: readonly BrokenPersisterVariant[] = [
  {
    name: 'drops-order',
    defect: 'returns messages ordered by id instead of seq',
    catches: ['P-MSG-002'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async getMessages(sessionId: string, query?: GetMessagesQuery): Promise<AnyMessage[]> {
          const messages = await this.inner.getMessages(sessionId, query)
          return messages.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        }
      })(inner),
  },
  {
    name: 'loses-nul',
    defect: 'strips U+0000 from every string it stores',
    catches: ['P-MSG-011'],
    wrap: (inner) =>
      transformingWrites(inner, (value) => mapStrings(value, (text) => text.replaceAll('\u0000', ''), true)),
  },
  {
    name: 'no-cascade',
    defect: 'deleteSession leaves the messages behind (no ON DELETE CASCADE)',
    catches: ['P-SES-017', 'P-SES-018'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        readonly orphans = new Map<string, AnyMessage[]>()
        override async deleteSession(id: string): Promise<void> {
          const left = await this.inner.getMessages(id)
          if (left.length > 0) this.orphans.set(id, [...(this.orphans.get(id) ?? []), ...left])
          return this.inner.deleteSession(id)
        }
        override async getMessages(sessionId: string, query?: GetMessagesQuery): Promise<AnyMessage[]> {
          const live = await this.inner.getMessages(sessionId, query)
          return [...(this.orphans.get(sessionId) ?? []), ...live].sort((a, b) => a.seq - b.seq)
        }
      })(inner),
  },
  {
    name: 'shares-objects',
    defect: 'returns the same cached objects from every read instead of copies',
    catches: ['P-SES-011', 'P-MSG-021'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        readonly sessions = new Map<string, SessionData>()
        readonly messages = new Map<string, AnyMessage[]>()
        override async saveSession(session: SessionData): Promise<void> {
          this.sessions.delete(session?.id)
          return this.inner.saveSession(session)
        }
        override async getSession(id: string): Promise<SessionData | null> {
          const cached = this.sessions.get(id)
          if (cached) return cached
          const fresh = await this.inner.getSession(id)
          if (fresh) this.sessions.set(id, fresh)
          return fresh
        }
        override async getAllSessions(): Promise<SessionData[]> {
          const all = await this.inner.getAllSessions()
          return all.map((s) => this.remember(s))
        }
        override async listSessions(query: ListSessionsQuery): Promise<SessionData[]> {
          const page = await this.inner.listSessions(query)
          return page.map((s) => this.remember(s))
        }
        /** The cached copy of `session`, caching it first if there is none (the stale-cache defect). */
        remember(session: SessionData): SessionData {
          const cached = this.sessions.get(session.id)
          if (cached) return cached
          this.sessions.set(session.id, session)
          return session
        }
        override async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
          this.messages.delete(sessionId)
          return this.inner.saveMessage(sessionId, message)
        }
        override async getMessages(sessionId: string, query?: GetMessagesQuery): Promise<AnyMessage[]> {
          if (query?.afterSeq !== undefined || query?.beforeSeq !== undefined || query?.limit !== undefined)
            return this.inner.getMessages(sessionId, query)
          const cached = this.messages.get(sessionId)
          if (cached) return [...cached]
          const fresh = await this.inner.getMessages(sessionId)
          this.messages.set(sessionId, fresh)
          return [...fresh]
        }
      })(inner),
  },
  {
    name: 'keeps-input-reference',
    defect:
      'keeps a reference to the saved session object, so later mutations of the input leak into storage',
    catches: ['P-SES-012'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        readonly inputs = new Map<string, SessionData>()
        override async saveSession(session: SessionData): Promise<void> {
          await this.inner.saveSession(session)
          this.inputs.set(session.id, session)
        }
        override async getSession(id: string): Promise<SessionData | null> {
          const input = this.inputs.get(id)
          const stored = await this.inner.getSession(id)
          return stored && input ? structuredClone(input) : stored
        }
      })(inner),
  },
  {
    name: 'no-not-found',
    defect: 'saveMessage into an unknown session silently does nothing',
    catches: ['P-MSG-007'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
          if (typeof sessionId === 'string' && sessionId !== '' && !(await this.inner.getSession(sessionId)))
            return
          return this.inner.saveMessage(sessionId, message)
        }
      })(inner),
  },
  {
    name: 'leaks-across-users',
    defect: 'listSessions ignores userId and appName',
    catches: ['P-SES-009'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override listSessions(query: ListSessionsQuery): Promise<SessionData[]> {
          const { userId: _user, appName: _app, ...rest } = query ?? {}
          return this.inner.listSessions(rest)
        }
      })(inner),
  },
  {
    name: 'ignores-state-filter',
    defect: 'listSessions ignores the state filter',
    catches: ['P-SES-010'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override listSessions(query: ListSessionsQuery): Promise<SessionData[]> {
          const { state: _state, ...rest } = query ?? {}
          return this.inner.listSessions(rest)
        }
      })(inner),
  },
  {
    name: 'ascending-tie-break',
    defect: 'breaks lastActivity ties by id ascending',
    catches: ['P-SES-007'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async listSessions(query: ListSessionsQuery): Promise<SessionData[]> {
          const { limit, offset = 0, ...rest } = query ?? {}
          const all = (await this.inner.listSessions(rest)).sort((a, b) =>
            a.lastActivity === b.lastActivity ? -compareByActivity(a, b) : compareByActivity(a, b),
          )
          return all.slice(offset, limit === undefined ? undefined : offset + limit)
        }
      })(inner),
  },
  {
    name: 'ignores-offset',
    defect: 'listSessions ignores offset',
    catches: ['P-SES-008'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override listSessions(query: ListSessionsQuery): Promise<SessionData[]> {
          const { offset: _offset, ...rest } = query ?? {}
          return this.inner.listSessions(rest)
        }
      })(inner),
  },
  {
    name: 'undefined-for-unknown',
    defect: 'getSession resolves to undefined for an unknown id',
    catches: ['P-SES-002'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async getSession(id: string): Promise<SessionData | null> {
          return (await this.inner.getSession(id)) ?? (undefined as unknown as null)
        }
      })(inner),
  },
  {
    name: 'absent-becomes-null',
    defect: 'reads return null for optional fields that were never set',
    catches: ['P-SES-019', 'P-MSG-009'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async getSession(id: string): Promise<SessionData | null> {
          const session = await this.inner.getSession(id)
          return session && withNulls(session, OPTIONAL_SESSION_FIELDS)
        }
        override async getMessages(sessionId: string, query?: GetMessagesQuery): Promise<AnyMessage[]> {
          return (await this.inner.getMessages(sessionId, query)).map((m) =>
            withNulls(m, OPTIONAL_MESSAGE_FIELDS),
          )
        }
      })(inner),
  },
  {
    name: 'merges-on-upsert',
    defect: 'saveSession merges the new value into the old one instead of replacing it',
    catches: ['P-SES-003'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async saveSession(session: SessionData): Promise<void> {
          const old =
            typeof session?.id === 'string' && session.id ? await this.inner.getSession(session.id) : null
          return this.inner.saveSession(old ? { ...old, ...session } : session)
        }
      })(inner),
  },
  {
    name: 'duplicates-on-resave',
    defect: 'getAllSessions lists a session once per save',
    catches: ['P-SES-004', 'P-SES-006'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        readonly saves = new Map<string, number>()
        override async saveSession(session: SessionData): Promise<void> {
          await this.inner.saveSession(session)
          this.saves.set(session.id, (this.saves.get(session.id) ?? 0) + 1)
        }
        override async getAllSessions(): Promise<SessionData[]> {
          const all = await this.inner.getAllSessions()
          return all.flatMap((s) =>
            Array.from({ length: this.saves.get(s.id) ?? 1 }, () => structuredClone(s)),
          )
        }
        override async listSessions(query: ListSessionsQuery): Promise<SessionData[]> {
          const page = await this.inner.listSessions(query)
          return page.flatMap((s) =>
            Array.from({ length: this.saves.get(s.id) ?? 1 }, () => structuredClone(s)),
          )
        }
      })(inner),
  },
  {
    name: 'drops-milliseconds',
    defect: 'stores timestamps with second precision',
    catches: ['P-SES-005', 'P-MSG-001', 'P-MSG-022'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async saveSession(session: SessionData): Promise<void> {
          if (
            !session ||
            Number.isNaN(Date.parse(session.createdAt)) ||
            Number.isNaN(Date.parse(session.lastActivity))
          ) {
            return this.inner.saveSession(session)
          }
          return this.inner.saveSession({
            ...session,
            createdAt: secondsOnly(session.createdAt),
            lastActivity: secondsOnly(session.lastActivity),
          })
        }
        override async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
          if (!message || Number.isNaN(Date.parse(message.timestamp)))
            return this.inner.saveMessage(sessionId, message)
          return this.inner.saveMessage(sessionId, { ...message, timestamp: secondsOnly(message.timestamp) })
        }
      })(inner),
  },
  {
    name: 'case-folds-ids',
    defect: 'treats session ids case-insensitively (lower-cases them)',
    catches: ['P-SES-014'],
    wrap: (inner) => normalisingIds(inner, (id) => id.toLowerCase()),
  },
  {
    name: 'trims-ids',
    defect: 'trims session ids and cuts them at 200 characters',
    catches: ['P-SES-013'],
    wrap: (inner) => normalisingIds(inner, (id) => id.trim().slice(0, 200) || id),
  },
  {
    name: 'delete-removes-all',
    defect: 'deleteSession deletes every session',
    catches: ['P-SES-015'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async deleteSession(id: string): Promise<void> {
          if (!(await this.inner.getSession(id))) return
          for (const session of await this.inner.getAllSessions()) await this.inner.deleteSession(session.id)
        }
      })(inner),
  },
  {
    name: 'delete-unknown-rejects',
    defect: 'deleteSession of an unknown id rejects with NOT_FOUND',
    catches: ['P-SES-016'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async deleteSession(id: string): Promise<void> {
          if (!(await this.inner.getSession(id))) throw new NotFoundError(`Session ${id} does not exist.`)
          return this.inner.deleteSession(id)
        }
      })(inner),
  },
  {
    name: 'inserts-duplicate-rows',
    defect: 'saving a known message id inserts another row instead of replacing it',
    catches: ['P-MSG-003', 'P-MSG-004', 'P-MSG-017'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        readonly seen = new Set<string>()
        readonly extra = new Map<string, AnyMessage[]>()
        override async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
          const key = JSON.stringify([sessionId, message?.id])
          const duplicate = this.seen.has(key)
          this.seen.add(key)
          if (duplicate) {
            const extras = this.extra.get(sessionId) ?? []
            extras.push(structuredClone(message))
            this.extra.set(sessionId, extras)
            return
          }
          return this.inner.saveMessage(sessionId, message)
        }
        override async getMessages(sessionId: string, query?: GetMessagesQuery): Promise<AnyMessage[]> {
          const rows = [
            ...(await this.inner.getMessages(sessionId, query)),
            ...(this.extra.get(sessionId) ?? []),
          ]
          return rows.sort((a, b) => a.seq - b.seq)
        }
        override async deleteMessages(sessionId: string): Promise<void> {
          this.extra.delete(sessionId)
          return this.inner.deleteMessages(sessionId)
        }
      })(inner),
  },
  {
    name: 'unknown-session-rejects',
    defect: 'getMessages of an unknown session rejects with NOT_FOUND',
    catches: ['P-MSG-005'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async getMessages(sessionId: string, query?: GetMessagesQuery): Promise<AnyMessage[]> {
          if (!(await this.inner.getSession(sessionId)))
            throw new NotFoundError(`Session ${sessionId} does not exist.`)
          return this.inner.getMessages(sessionId, query)
        }
      })(inner),
  },
  {
    name: 'global-message-ids',
    defect: 'message ids are a global key: saving an id into another session moves it there',
    catches: ['P-MSG-006'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        readonly owner = new Map<string, string>()
        override async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
          const previous = this.owner.get(message?.id)
          if (previous !== undefined && previous !== sessionId) {
            const kept = (await this.inner.getMessages(previous)).filter((m) => m.id !== message.id)
            await this.inner.deleteMessages(previous)
            for (const m of kept) await this.inner.saveMessage(previous, m)
          }
          await this.inner.saveMessage(sessionId, message)
          this.owner.set(message.id, sessionId)
        }
      })(inner),
  },
  {
    name: 'booleans-as-integers',
    defect: 'stores JSON booleans as 1 and 0',
    catches: ['P-MSG-008'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
          if (!message || typeof message !== 'object') return this.inner.saveMessage(sessionId, message)
          const toInt = (value: unknown): unknown => (typeof value === 'boolean' ? Number(value) : value)
          return this.inner.saveMessage(sessionId, {
            ...message,
            content: mapValues(message.content, toInt) as AnyMessage['content'],
            ...(message.metadata
              ? { metadata: mapValues(message.metadata, toInt) as Record<string, unknown> }
              : {}),
          })
        }
      })(inner),
  },
  {
    name: 'normalizes-unicode',
    defect: 'NFC-normalises every string',
    catches: ['P-MSG-010'],
    wrap: (inner) => transformingWrites(inner, (value) => mapStrings(value, (text) => text.normalize('NFC'))),
  },
  {
    name: 'replaces-lone-surrogates',
    defect: 'round-trips strings through UTF-8 bytes, turning lone surrogates into U+FFFD',
    catches: ['P-MSG-012'],
    wrap: (inner) =>
      transformingWrites(inner, (value) =>
        mapStrings(value, (text) => Buffer.from(text, 'utf8').toString('utf8')),
      ),
  },
  {
    name: 'loses-proto-keys',
    defect: 'copies objects with obj[key] = value, so a __proto__ key becomes a prototype',
    catches: ['P-MSG-013'],
    wrap: (inner) => {
      const naiveCopy = (value: unknown): unknown => {
        if (Array.isArray(value)) return value.map(naiveCopy)
        if (typeof value !== 'object' || value === null) return value
        const out: Record<string, unknown> = {}
        for (const [key, item] of Object.entries(value)) out[key] = naiveCopy(item)
        return out
      }
      return new (class extends DelegatingPersister {
        override async getMessages(sessionId: string, query?: GetMessagesQuery): Promise<AnyMessage[]> {
          return (await this.inner.getMessages(sessionId, query)).map((m) => naiveCopy(m) as AnyMessage)
        }
      })(inner)
    },
  },
  {
    name: 'truncates-large-text',
    defect: 'cuts strings longer than 1 MiB',
    catches: ['P-MSG-014'],
    wrap: (inner) =>
      transformingWrites(inner, (value) => mapStrings(value, (text) => text.slice(0, 1024 * 1024))),
  },
  {
    name: 'normalizes-string-content',
    defect: 'NFC-normalises a message whose content is a string (text blocks are left alone)',
    catches: ['P-MSG-027'],
    wrap: (inner) =>
      transformingWrites(inner, (value) =>
        isMessage(value) && typeof value.content === 'string'
          ? { ...value, content: value.content.normalize('NFC') }
          : value,
      ),
  },
  {
    name: 'caps-tool-results',
    defect: 'cuts the string content of a tool result at 65 535 characters (a TEXT column)',
    catches: ['P-MSG-027'],
    wrap: (inner) =>
      transformingWrites(inner, (value) =>
        isMessage(value) && Array.isArray(value.content)
          ? {
              ...value,
              content: value.content.map((block) =>
                block.type === 'tool_result' && typeof block.content === 'string'
                  ? { ...block, content: block.content.slice(0, 65_535) }
                  : block,
              ),
            }
          : value,
      ),
  },
  {
    name: 'trims-session-text',
    defect: 'trims the summary and systemPrompt of a session',
    catches: ['P-MSG-027'],
    wrap: (inner) =>
      transformingWrites(inner, (value) =>
        isMessage(value)
          ? value
          : {
              ...(value as SessionData),
              summary: (value as SessionData).summary.trim(),
              ...((value as SessionData).systemPrompt === undefined
                ? {}
                : { systemPrompt: (value as SessionData).systemPrompt?.trim() }),
            },
      ),
  },
  {
    name: 'utf8-metadata',
    defect: 'encodes message metadata as UTF-8 bytes, turning lone surrogates into U+FFFD',
    catches: ['P-MSG-027'],
    wrap: (inner) =>
      transformingWrites(inner, (value) =>
        isMessage(value) && value.metadata !== undefined
          ? {
              ...value,
              metadata: mapStrings(
                value.metadata,
                (text) => Buffer.from(text, 'utf8').toString('utf8'),
                true,
              ),
            }
          : value,
      ),
  },
  {
    name: 'strips-nul-from-sessions',
    defect: 'removes U+0000 from the string fields of a session instead of refusing it',
    catches: ['P-MSG-027'],
    wrap: (inner) =>
      transformingWrites(inner, (value) =>
        isMessage(value) ? value : mapStrings(value, (text) => text.replaceAll('\u0000', '')),
      ),
  },
  {
    name: 'drops-false-flags',
    defect: 'writes `incomplete: false` and `isError: false` as absent',
    catches: ['P-MSG-028'],
    wrap: (inner) =>
      transformingWrites(inner, (value) => {
        if (!isMessage(value)) return value
        const { incomplete, ...rest } = value
        const content = Array.isArray(rest.content)
          ? rest.content.map((block) => {
              if (block.type !== 'tool_result' || block.isError !== false) return block
              const { isError: _dropped, ...kept } = block
              return kept
            })
          : rest.content
        return { ...rest, content, ...(incomplete ? { incomplete } : {}) } as AnyMessage
      }),
  },
  {
    name: 'delete-messages-everywhere',
    defect: "deleteMessages clears every session's messages",
    catches: ['P-MSG-015'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async deleteMessages(_sessionId: string): Promise<void> {
          for (const session of await this.inner.getAllSessions()) await this.inner.deleteMessages(session.id)
        }
      })(inner),
  },
  {
    name: 'racy-read-modify-write',
    defect: 'saveMessage rewrites the whole message list (read, wait, write), losing concurrent saves',
    catches: ['P-MSG-016'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
          if (!(await this.inner.getSession(sessionId))) return this.inner.saveMessage(sessionId, message)
          const current = await this.inner.getMessages(sessionId)
          await new Promise((resolve) => setImmediate(resolve))
          await this.inner.deleteMessages(sessionId)
          for (const m of [...current.filter((m) => m.id !== message.id), message].sort(
            (a, b) => a.seq - b.seq,
          )) {
            await this.inner.saveMessage(sessionId, m)
          }
        }
      })(inner),
  },
  {
    name: 'after-seq-inclusive',
    defect: 'getMessages treats afterSeq as inclusive',
    catches: ['P-MSG-018'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override getMessages(sessionId: string, query?: GetMessagesQuery): Promise<AnyMessage[]> {
          if (query?.afterSeq === undefined) return this.inner.getMessages(sessionId, query)
          return this.inner.getMessages(sessionId, { ...query, afterSeq: query.afterSeq - 1 })
        }
      })(inner),
  },
  {
    name: 'no-paging-validation',
    defect: 'an invalid limit or offset is ignored instead of rejected',
    catches: ['P-MSG-019', 'P-ERR-006'],
    wrap: (inner) => {
      const valid = (n: number | undefined): boolean => n === undefined || (Number.isSafeInteger(n) && n >= 0)
      return new (class extends DelegatingPersister {
        override getMessages(sessionId: string, query?: GetMessagesQuery): Promise<AnyMessage[]> {
          if (valid(query?.limit)) return this.inner.getMessages(sessionId, query)
          const { limit: _limit, ...rest } = query ?? {}
          return this.inner.getMessages(sessionId, rest)
        }
        override listSessions(query: ListSessionsQuery): Promise<SessionData[]> {
          const { limit, offset, ...rest } = query ?? {}
          return this.inner.listSessions({
            ...rest,
            ...(valid(limit) && limit !== undefined ? { limit } : {}),
            ...(valid(offset) && offset !== undefined ? { offset } : {}),
          })
        }
      })(inner)
    },
  },
  {
    name: 'strips-provider-metadata',
    defect: 'drops providerMetadata from content blocks',
    catches: ['P-MSG-020'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
          if (!Array.isArray(message?.content)) return this.inner.saveMessage(sessionId, message)
          const strip = (block: Record<string, unknown>): Record<string, unknown> => {
            const { providerMetadata: _drop, ...rest } = block
            return Array.isArray(rest.content) ? { ...rest, content: rest.content.map(strip) } : rest
          }
          const content = message.content.map((b) => strip(b as unknown as Record<string, unknown>))
          return this.inner.saveMessage(sessionId, {
            ...message,
            content: content as unknown as AnyMessage['content'],
          })
        }
      })(inner),
  },
  {
    name: 'partial-token-usage',
    defect: 'stores only inputTokens, outputTokens and totalTokens of a TokenUsage',
    catches: ['P-SES-001'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async saveSession(session: SessionData): Promise<void> {
          if (!session?.tokenUsage) return this.inner.saveSession(session)
          const { inputTokens, outputTokens, totalTokens } = session.tokenUsage
          return this.inner.saveSession({
            ...session,
            tokenUsage: { inputTokens, outputTokens, totalTokens },
          })
        }
      })(inner),
  },
  {
    name: 'throws-synchronously',
    defect: 'saveSession validates synchronously and throws instead of rejecting',
    catches: ['P-LIF-001'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override saveSession(session: SessionData): Promise<void> {
          if (typeof session !== 'object' || session === null)
            throw new ValidationError('session must be an object.')
          return this.inner.saveSession(session)
        }
      })(inner),
  },
  {
    name: 'shared-global-store',
    defect: 'every create() opens the same global store',
    catches: ['P-LIF-002'],
    storage: 'shared',
    wrap: (inner) => inner,
  },
  {
    name: 'forgets-on-reopen',
    defect: 'keeps data only in the instance: a reopened persister is empty',
    catches: ['P-LIF-003', 'P-LIF-004', 'P-LIF-005', 'P-MIG-001', 'P-MIG-002', 'P-MIG-003'],
    storage: 'forgotten',
    wrap: (inner) => inner,
  },
  {
    name: 'ignores-close',
    defect: 'close() does nothing; the persister keeps working',
    catches: ['P-LIF-006'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async close(): Promise<void> {}
      })(inner),
  },
  {
    name: 'close-twice-rejects',
    defect: 'a second close() rejects with CLOSED',
    catches: ['P-LIF-007'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        closed = false
        override async close(): Promise<void> {
          if (this.closed) throw new PersistenceError('Already closed.', { code: 'CLOSED' })
          this.closed = true
          return super.close()
        }
      })(inner),
  },
  {
    name: 'plain-errors',
    defect: 'rejects with plain Error objects carrying a code property instead of AgentErrors',
    catches: ['P-ERR-001'],
    wrap: (inner) => {
      const plain = async <T>(action: () => Promise<T>): Promise<T> => {
        try {
          return await action()
        } catch (error) {
          if (!isAgentError(error)) throw error
          throw Object.assign(new Error(error.message), { code: error.code, retryable: error.retryable })
        }
      }
      return new (class extends DelegatingPersister {
        override saveSession(session: SessionData): Promise<void> {
          return plain(() => this.inner.saveSession(session))
        }
        override saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
          return plain(() => this.inner.saveMessage(sessionId, message))
        }
        override getAllSessions(): Promise<SessionData[]> {
          return plain(() => this.inner.getAllSessions())
        }
      })(inner)
    },
  },
  {
    name: 'swallows-validation',
    defect: 'invalid sessions and messages are silently ignored instead of rejected',
    catches: ['P-ERR-002', 'P-ERR-003'],
    wrap: (inner) => {
      const swallow = async (action: () => Promise<void>): Promise<void> => {
        try {
          await action()
        } catch (error) {
          if (!isAgentError(error) || error.code !== 'VALIDATION') throw error
        }
      }
      return new (class extends DelegatingPersister {
        override saveSession(session: SessionData): Promise<void> {
          return swallow(() => this.inner.saveSession(session))
        }
        override saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
          return swallow(() => this.inner.saveMessage(sessionId, message))
        }
      })(inner)
    },
  },
  {
    name: 'json-stringify-copy',
    defect:
      'copies input with JSON.parse(JSON.stringify()): functions vanish, NaN becomes null, a cycle throws a TypeError',
    catches: ['P-ERR-004'],
    wrap: (inner) =>
      transformingWrites(inner, (value) => (value === undefined ? value : JSON.parse(JSON.stringify(value)))),
  },
  {
    name: 'repairs-loose-fields',
    defect:
      'quietly repairs fields of the wrong shape (shifts offsets to UTC, drops null metadata, fills in usage, maps an unknown stopReason, patches content blocks) instead of rejecting them',
    catches: ['P-ERR-007'],
    wrap: (inner) => transformingWrites(inner, repairLooseFields),
  },
  {
    name: 'memory-only',
    defect: 'keeps the store in this process: a reopen here finds it, a fresh process finds nothing',
    catches: ['P-LIF-008'],
    storage: 'memory-only',
    wrap: (inner) => inner,
  },
  {
    name: 'orders-by-timestamp-then-id',
    defect: 'returns messages ordered by timestamp, then id, instead of seq',
    catches: ['P-MSG-002', 'P-MSG-026'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async getMessages(sessionId: string, query?: GetMessagesQuery): Promise<AnyMessage[]> {
          const all = (await this.inner.getMessages(sessionId)).sort((a, b) =>
            a.timestamp !== b.timestamp
              ? a.timestamp < b.timestamp
                ? -1
                : 1
              : a.id < b.id
                ? -1
                : a.id > b.id
                  ? 1
                  : 0,
          )
          return pageLike(all, query)
        }
      })(inner),
  },
  {
    name: 'ignores-paging',
    defect: 'getMessages ignores afterSeq, beforeSeq and limit and returns every message',
    catches: ['P-MSG-018', 'P-MSG-024', 'P-MSG-026'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override getMessages(sessionId: string, query?: GetMessagesQuery): Promise<AnyMessage[]> {
          if (query?.limit !== undefined && !(Number.isSafeInteger(query.limit) && query.limit >= 0))
            return this.inner.getMessages(sessionId, query)
          return this.inner.getMessages(sessionId)
        }
      })(inner),
  },
  {
    name: 'before-seq-takes-first',
    defect: 'with beforeSeq and limit, returns the first `limit` messages before it instead of the last',
    catches: ['P-MSG-024', 'P-MSG-026'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async getMessages(sessionId: string, query?: GetMessagesQuery): Promise<AnyMessage[]> {
          if (query?.beforeSeq === undefined || query.limit === undefined)
            return this.inner.getMessages(sessionId, query)
          const { limit, ...range } = query
          return (await this.inner.getMessages(sessionId, range)).slice(0, limit)
        }
      })(inner),
  },
  {
    name: 'drops-v2-message-fields',
    defect: 'does not store agentName and compaction',
    catches: ['P-MSG-025'],
    wrap: (inner) =>
      transformingWrites(inner, (value) => {
        if (typeof value !== 'object' || value === null || !('seq' in value)) return value
        const { agentName: _agent, compaction: _compaction, ...rest } = value as AnyMessage
        return rest
      }),
  },
  {
    name: 'drops-v2-session-fields',
    defect: 'does not store activeAgent and forkedFrom',
    catches: ['P-SES-020'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override saveSession(session: SessionData): Promise<void> {
          if (typeof session !== 'object' || session === null) return this.inner.saveSession(session)
          const { activeAgent: _agent, forkedFrom: _fork, ...rest } = session
          return this.inner.saveSession(rest)
        }
      })(inner),
  },
  {
    name: 'first-state-only',
    defect: 'listSessions with several states filters by the first one only',
    catches: ['P-SES-021'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override listSessions(query: ListSessionsQuery): Promise<SessionData[]> {
          if (!Array.isArray(query?.state) || query.state.length === 0) return this.inner.listSessions(query)
          return this.inner.listSessions({ ...query, state: query.state[0] })
        }
      })(inner),
  },
  {
    name: 'loose-metadata-match',
    defect: "compares metadata values as text, so 1 matches '1' and true matches 'true'",
    catches: ['P-SES-022'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async listSessions(query: ListSessionsQuery): Promise<SessionData[]> {
          if (query?.metadata === undefined) return this.inner.listSessions(query)
          const { metadata, limit, offset = 0, ...rest } = query
          const all = (await this.inner.listSessions(rest)).filter(
            (session) =>
              session.metadata !== undefined &&
              metadata.key in session.metadata &&
              String(session.metadata[metadata.key]) === String(metadata.value),
          )
          return all.slice(offset, limit === undefined ? undefined : offset + limit)
        }
      })(inner),
  },
  {
    name: 'lists-children',
    defect: 'listSessions lists child sessions without includeChildren',
    catches: ['P-SES-023'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override listSessions(query: ListSessionsQuery): Promise<SessionData[]> {
          return this.inner.listSessions({ ...query, includeChildren: true })
        }
      })(inner),
  },
  {
    name: 'delete-keeps-children',
    defect: 'deleteSession leaves the child sessions of the deleted session behind',
    catches: ['P-SES-024', 'P-MIG-002'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async deleteSession(id: string): Promise<void> {
          const children = (await this.inner.getAllSessions()).filter(
            (session) => session.parentSessionId === id,
          )
          for (const child of children)
            await this.inner.saveSession({ ...child, parentSessionId: `${id}-orphaned` })
          await this.inner.deleteSession(id)
          for (const child of children) await this.inner.saveSession(child)
        }
      })(inner),
  },
  {
    name: 'ignores-list-limit',
    defect: 'listSessions ignores limit',
    catches: ['P-SES-025'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override listSessions(query: ListSessionsQuery): Promise<SessionData[]> {
          if (query?.limit === undefined || !Number.isSafeInteger(query.limit) || query.limit < 0)
            return this.inner.listSessions(query)
          const { limit: _limit, ...rest } = query
          return this.inner.listSessions(rest)
        }
      })(inner),
  },
  {
    name: 'lease-check-then-set',
    defect: 'claims a lease by reading it and writing it in two steps, so racing owners both win',
    catches: ['P-LSE-001'],
    wrap: (inner) => new CheckThenSetLeases(inner),
  },
  {
    name: 'scope-by-prefix',
    defect: "matches userId and appName as prefixes (LIKE 'u1%'): user bob's scope takes in bobby's sessions",
    catches: ['P-SES-009', 'P-RET-002', 'P-LSE-007'],
    wrap: (inner) => new PrefixScope(inner),
  },
  {
    name: 'leases-per-instance',
    defect:
      'keeps leases in the instance: another instance on the store (another process) claims a held session',
    catches: ['P-LSE-008'],
    wrap: (inner) => new CheckThenSetLeases(inner, { atomic: true }),
  },
  {
    name: 'lease-never-expires',
    defect: 'a lease lasts until it is released, whatever ttlMs',
    catches: ['P-LSE-002', 'P-LSE-003'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override claimSession(id: string, owner: string, ttlMs: number): Promise<boolean> {
          const valid = Number.isSafeInteger(ttlMs) && ttlMs > 0
          return this.inner.claimSession!(id, owner, valid ? 365 * 86_400_000 : ttlMs)
        }
      })(inner),
  },
  {
    name: 'lease-not-reentrant',
    defect: 'a claim by the owner of a live lease is refused',
    catches: ['P-LSE-003'],
    wrap: (inner) => new CheckThenSetLeases(inner, { reentrant: false, atomic: true }),
  },
  {
    name: 'release-by-anyone',
    defect: 'releaseSession frees the lease whoever calls it',
    catches: ['P-LSE-004'],
    wrap: (inner) => new CheckThenSetLeases(inner, { releaseByAnyone: true, atomic: true }),
  },
  {
    name: 'claims-unknown-sessions',
    defect: 'claimSession of an unknown session resolves to true',
    catches: ['P-LSE-005'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async claimSession(id: string, owner: string, ttlMs: number): Promise<boolean> {
          try {
            return await this.inner.claimSession!(id, owner, ttlMs)
          } catch (error) {
            if (isAgentError(error) && error.code === 'NOT_FOUND') return true
            throw error
          }
        }
      })(inner),
  },
  {
    name: 'save-clears-lease',
    defect: 'saveSession of a leased session ends its lease',
    catches: ['P-LSE-006'],
    wrap: (inner) => new CheckThenSetLeases(inner, { saveClears: true, atomic: true }),
  },
  {
    name: 'interrupts-live-sends',
    defect: 'markInterrupted marks every active session of the scope, ignoring live leases',
    catches: ['P-LSE-007'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async markInterrupted(scope?: SessionScope): Promise<number> {
          const active = await this.inner.listSessions({
            ...(scope ?? {}),
            state: 'active',
            includeChildren: true,
          })
          for (const session of active) await this.inner.saveSession({ ...session, state: 'interrupted' })
          return active.length
        }
      })(inner),
  },
  {
    name: 'retention-inclusive',
    defect: 'deleteSessions also deletes sessions active exactly at the instant (<= instead of <)',
    catches: ['P-RET-001'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override deleteSessions(query: DeleteSessionsQuery): Promise<number> {
          const instant = Date.parse(query?.lastActivityBefore)
          if (Number.isNaN(instant)) return this.inner.deleteSessions!(query)
          return this.inner.deleteSessions!({
            ...query,
            lastActivityBefore: new Date(instant + 1).toISOString(),
          })
        }
      })(inner),
  },
  {
    name: 'retention-ignores-scope',
    defect: 'deleteSessions ignores states, userId and appName',
    catches: ['P-RET-002'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override deleteSessions(query: DeleteSessionsQuery): Promise<number> {
          if (typeof query !== 'object' || query === null) return this.inner.deleteSessions!(query)
          return this.inner.deleteSessions!({ lastActivityBefore: query.lastActivityBefore })
        }
      })(inner),
  },
  {
    name: 'retention-keeps-children',
    defect: 'deleteSessions leaves the child sessions of what it deletes',
    catches: ['P-RET-003'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async deleteSessions(query: DeleteSessionsQuery): Promise<number> {
          // Detach every child for the delete, so only sessions the query selects go.
          const children = (await this.inner.getAllSessions()).filter((s) => s.parentSessionId !== undefined)
          for (const { parentSessionId: _parent, ...child } of children) await this.inner.saveSession(child)
          try {
            return await this.inner.deleteSessions!(query)
          } finally {
            const left = new Set((await this.inner.getAllSessions()).map((session) => session.id))
            for (const child of children) if (left.has(child.id)) await this.inner.saveSession(child)
          }
        }
      })(inner),
  },
  {
    name: 'retention-deletes-lone-children',
    defect: 'deleteSessions deletes an old child session on its own, stranding its parent',
    catches: ['P-RET-006'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override async deleteSessions(query: DeleteSessionsQuery): Promise<number> {
          let deleted = await this.inner.deleteSessions!(query)
          if (typeof query !== 'object' || query === null) return deleted
          // Children selected like any session, as if they had no parent.
          for (const session of await this.inner.getAllSessions()) {
            if (session.parentSessionId === undefined || session.lastActivity >= query.lastActivityBefore)
              continue
            if (query.states !== undefined && !query.states.includes(session.state)) continue
            await this.inner.deleteSession(session.id)
            deleted += 1
          }
          return deleted
        }
      })(inner),
  },
  {
    name: 'retention-ignores-leases',
    defect: 'deleteSessions deletes sessions under a live lease (a send running in another process)',
    catches: ['P-RET-005'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        readonly #holders = new Map<string, string>()
        override async claimSession(id: string, owner: string, ttlMs: number): Promise<boolean> {
          const claimed = await this.inner.claimSession!(id, owner, ttlMs)
          if (claimed) this.#holders.set(id, owner)
          return claimed
        }
        override async deleteSessions(query: DeleteSessionsQuery): Promise<number> {
          // As if leases did not exist: every lease is let go before selecting.
          for (const [id, owner] of this.#holders) await this.inner.releaseSession!(id, owner)
          this.#holders.clear()
          return this.inner.deleteSessions!(query)
        }
      })(inner),
  },
  {
    name: 'retention-no-validation',
    defect: 'deleteSessions with an unparseable instant deletes everything instead of rejecting',
    catches: ['P-RET-004'],
    wrap: (inner) =>
      new (class extends DelegatingPersister {
        override deleteSessions(query: DeleteSessionsQuery): Promise<number> {
          const instant =
            typeof query?.lastActivityBefore === 'string' ? Date.parse(query.lastActivityBefore) : Number.NaN
          if (!Number.isNaN(instant)) return this.inner.deleteSessions!(query)
          return this.inner.deleteSessions!({ lastActivityBefore: '9999-12-31T23:59:59.999Z' })
        }
      })(inner),
  },
]

/** The page of `query` cut from messages already in the (broken) order of `all`. */
function pageLike(all: AnyMessage[], query: GetMessagesQuery | undefined): AnyMessage[] {
  const after = query?.afterSeq
  const before = query?.beforeSeq
  const range = all.filter(
    (m) => (after === undefined || m.seq > after) && (before === undefined || m.seq < before),
  )
  if (query?.limit === undefined) return range
  return before === undefined
    ? range.slice(0, query.limit)
    : range.slice(Math.max(0, range.length - query.limit))
}

/**
 * Leases kept beside the reference (which stores no lease of its own here), with switchable
 * defects. Not atomic by default: the check and the write are separated by a turn of the event
 * loop, as a read-then-write over a database connection would be.
 */
/** Scopes by prefix: every (userId, appName) that begins with the asked one is in scope. */
class PrefixScope extends DelegatingPersister {
  override async listSessions(query: ListSessionsQuery = {}): Promise<SessionData[]> {
    const { userId: _userId, appName: _appName, ...rest } = query
    const all = await this.inner.listSessions(rest)
    return all.filter((session) => within(session, query))
  }

  override async deleteSessions(query: DeleteSessionsQuery): Promise<number> {
    const { userId: _userId, appName: _appName, ...rest } = query
    let count = 0
    for (const scope of await this.#expand(query))
      count += await this.inner.deleteSessions!({ ...rest, ...scope })
    return count
  }

  override async markInterrupted(scope: SessionScope = {}): Promise<number> {
    let count = 0
    for (const exact of await this.#expand(scope)) count += await this.inner.markInterrupted!(exact)
    return count
  }

  /** The exact scopes the prefix scope takes in. */
  async #expand(scope: SessionScope): Promise<SessionScope[]> {
    if (scope.userId === undefined && scope.appName === undefined) return [scope]
    const scopes = new Map<string, SessionScope>()
    for (const session of await this.inner.getAllSessions()) {
      if (!within(session, scope)) continue
      const exact: SessionScope = {
        ...(scope.userId === undefined ? {} : { userId: session.userId }),
        ...(scope.appName === undefined ? {} : { appName: session.appName }),
      }
      scopes.set(JSON.stringify(exact), exact)
    }
    return [...scopes.values()]
  }
}

function within(session: SessionData, scope: SessionScope): boolean {
  return (
    (scope.userId === undefined || (session.userId ?? '').startsWith(scope.userId)) &&
    (scope.appName === undefined || (session.appName ?? '').startsWith(scope.appName))
  )
}

class CheckThenSetLeases extends DelegatingPersister {
  readonly #leases = new Map<string, { owner: string; until: number }>()
  readonly #options: { reentrant: boolean; atomic: boolean; releaseByAnyone: boolean; saveClears: boolean }

  constructor(
    inner: AgentPersister,
    options: Partial<{
      reentrant: boolean
      atomic: boolean
      releaseByAnyone: boolean
      saveClears: boolean
    }> = {},
  ) {
    super(inner)
    this.#options = { reentrant: true, atomic: false, releaseByAnyone: false, saveClears: false, ...options }
  }

  override async claimSession(id: string, owner: string, ttlMs: number): Promise<boolean> {
    validateClaimArguments(id, owner, ttlMs)
    if (!(await this.inner.getSession(id)))
      throw new NotFoundError(`Cannot claim session ${id}: it does not exist.`)
    const current = this.#leases.get(id)
    const free =
      current === undefined ||
      current.until <= Date.now() ||
      (current.owner === owner && this.#options.reentrant)
    if (!this.#options.atomic) await new Promise((resolve) => setImmediate(resolve))
    if (!free) return false
    this.#leases.set(id, { owner, until: Date.now() + ttlMs })
    return true
  }

  override async releaseSession(id: string, owner: string): Promise<void> {
    validateReleaseArguments(id, owner)
    if (this.#options.releaseByAnyone || this.#leases.get(id)?.owner === owner) this.#leases.delete(id)
  }

  override async saveSession(session: SessionData): Promise<void> {
    await this.inner.saveSession(session)
    if (this.#options.saveClears && typeof session?.id === 'string') this.#leases.delete(session.id)
  }
}
