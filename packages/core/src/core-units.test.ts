import { describe, expect, it } from 'vitest'
import {
  AdapterError,
  adapterErrorKindFromStatus,
  isAdapterError,
  parseRetryAfterMs,
} from './errors/adapter-error.js'
import { AgentError, isAgentError } from './errors/agent-error.js'
import { PersistenceError } from './errors/persistence-error.js'
import { SessionStateError } from './errors/session-state-error.js'
import { InMemoryPersister } from './persistence/in-memory-persister.js'
import { cloneJson } from './persistence/json-copy.js'
import { backoffDelay } from './retry/retry-options.js'
import { assertTransition, canTransition } from './session/session-state.js'
import { WriteQueue } from './session/write-queue.js'
import { rejectUnknownOptions } from './util/reject-unknown-options.js'
import { uuidv7 } from './util/uuid-v7.js'
import { ConfigurationError } from './errors/configuration-error.js'

describe('uuidv7', () => {
  it('makes version-7 ids that sort in creation order, also within one millisecond', () => {
    const ids = Array.from({ length: 2000 }, () => uuidv7(1_700_000_000_000))
    expect(new Set(ids).size).toBe(2000)
    expect([...ids].sort()).toEqual(ids)
    expect(ids[0]).toMatch(/^018bcfe5-6800-7[0-9a-f]{3}-[89ab]/)
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    // The random tails differ, also across refills of the random pool (16 bytes per id).
    expect(new Set(ids.map((id) => id.slice(19))).size).toBe(2000)
  })
})

describe('errors', () => {
  it('are recognisable across package copies through a Symbol.for marker', () => {
    const error = new AdapterError('x', { kind: 'rate_limit', provider: 'p', status: 429, retryAfterMs: 5 })
    const foreign = Object.assign(Object.create(Error.prototype), {
      kind: 'server',
      provider: 'p',
      code: 'X',
    })
    Object.defineProperty(foreign, Symbol.for('agentx.error'), { value: true })
    expect(isAgentError(error)).toBe(true)
    expect(isAdapterError(foreign)).toBe(true)
    expect(isAgentError(new Error('plain'))).toBe(false)
    expect(error).toMatchObject({
      name: 'AdapterError',
      code: 'ADAPTER_RATE_LIMIT',
      retryable: true,
      retryAfterMs: 5,
    })
    expect(new AdapterError('x', { kind: 'invalid_request', provider: 'p' }).retryable).toBe(false)
    expect(new PersistenceError('closed', { code: 'CLOSED' })).toMatchObject({
      code: 'CLOSED',
      retryable: false,
    })
    expect(new AgentError('m', 'C', { cause: 'why' }).cause).toBe('why')
  })

  it('map HTTP statuses to kinds', () => {
    expect(
      [400, 401, 403, 404, 408, 409, 413, 429, 500, 503, 529, 418].map(adapterErrorKindFromStatus),
    ).toEqual([
      'invalid_request',
      'authentication',
      'permission',
      'not_found',
      'timeout',
      'server',
      'context_length',
      'rate_limit',
      'server',
      'overloaded',
      'overloaded',
      'unknown',
    ])
  })

  it('read retry-after in seconds, as an HTTP date, and retry-after-ms', () => {
    const now = Date.parse('2026-01-01T00:00:00Z')
    expect(parseRetryAfterMs(new Headers({ 'retry-after': '3' }), now)).toBe(3000)
    expect(parseRetryAfterMs({ 'Retry-After': 'Thu, 01 Jan 2026 00:00:05 GMT' }, now)).toBe(5000)
    // Negative or malformed values say nothing: the kernel's own backoff applies.
    for (const value of ['-5', '-0.5', '1e3', 'soon', '5 s']) {
      expect(parseRetryAfterMs({ 'retry-after': value }, now)).toBeUndefined()
      expect(parseRetryAfterMs({ 'retry-after-ms': value }, now)).toBeUndefined()
    }
    expect(parseRetryAfterMs({ 'retry-after-ms': '-200', 'retry-after': '2' }, now)).toBe(2000)
    expect(parseRetryAfterMs({ 'retry-after-ms': '250.5' }, now)).toBe(250.5)
    expect(parseRetryAfterMs({ 'retry-after-ms': '250', 'retry-after': '9' }, now)).toBe(250)
    expect(parseRetryAfterMs({ 'retry-after': 'soon' }, now)).toBeUndefined()
    expect(parseRetryAfterMs(undefined, now)).toBeUndefined()
  })
})

describe('session state machine', () => {
  it('allows the documented transitions and throws SessionStateError otherwise', () => {
    expect(canTransition('created', 'active')).toBe(true)
    expect(canTransition('error', 'active')).toBe(true)
    expect(canTransition('interrupted', 'active')).toBe(true)
    expect(canTransition('deleted', 'active')).toBe(false)
    expect(() => assertTransition('created', 'idle')).toThrow(SessionStateError)
  })
})

describe('retry backoff', () => {
  it('doubles with jitter and stays under maxDelayMs', () => {
    const options = { maxRetries: 5, initialDelayMs: 100, maxDelayMs: 300 }
    expect(backoffDelay(1, options, () => 0)).toBe(50)
    expect(backoffDelay(1, options, () => 1)).toBe(100)
    expect(backoffDelay(2, options, () => 1)).toBe(200)
    expect(backoffDelay(5, options, () => 1)).toBe(300)
  })
})

describe('cloneJson', () => {
  it('keeps hostile keys as data, drops undefined, normalises -0, and rejects cycles and functions', () => {
    const input = JSON.parse('{"__proto__":{"polluted":true},"a":-0}') as Record<string, unknown>
    const copy = cloneJson<Record<string, unknown>>({ ...input, b: undefined })
    expect(Object.keys(copy)).toEqual(['__proto__', 'a'])
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(Object.is(copy.a, 0)).toBe(true)
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    expect(() => cloneJson(cyclic)).toThrow(expect.objectContaining({ code: 'VALIDATION' }))
    expect(() => cloneJson({ f: () => 1 })).toThrow(expect.objectContaining({ code: 'VALIDATION' }))
  })

  it('refuses built-ins whose data JSON drops instead of turning them into {}; honours toJSON', async () => {
    for (const value of [new Map([[1, 2]]), new Set([1]), new Error('x'), /x/, new Uint8Array(2)]) {
      expect(() => cloneJson({ metadata: value })).toThrow(expect.objectContaining({ code: 'VALIDATION' }))
    }
    expect(cloneJson({ at: new Date(0), money: { toJSON: () => '1.00 EUR' } })).toEqual({
      at: '1970-01-01T00:00:00.000Z',
      money: '1.00 EUR',
    })
    expect(() => cloneJson(JSON.parse('{"__proto__":{}}'), '$', { refuseProtoKeys: true })).toThrow(
      /__proto__ is not allowed/,
    )
    // A store keeps nothing of a refused value.
    const persister = new InMemoryPersister()
    const at = '2026-01-01T00:00:00.000Z'
    const data = { id: 's', summary: '', createdAt: at, lastActivity: at, state: 'idle' as const }
    const tokenUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 }
    await expect(
      persister.saveSession({ ...data, tokenUsage, metadata: { tags: new Map() } as never }),
    ).rejects.toMatchObject({ code: 'VALIDATION' })
    expect(await persister.getSession('s')).toBeNull()
  })
})

describe('WriteQueue', () => {
  const session = {
    id: 's',
    summary: '',
    createdAt: '2026-01-01T00:00:00.000Z',
    lastActivity: '2026-01-01T00:00:00.000Z',
    state: 'idle' as const,
    tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
  }
  const message = (text: string, incomplete?: boolean) => ({
    id: 'm1',
    sessionId: 's',
    seq: 0,
    type: 'agent' as const,
    content: text,
    timestamp: '2026-01-01T00:00:00.000Z',
    ...(incomplete ? { incomplete } : {}),
  })

  it('coalesces repeated writes of one message and never writes a superseded failed value again', async () => {
    const persister = new InMemoryPersister()
    await persister.saveSession(session)
    const writes: string[] = []
    let fail = true
    const original = persister.saveMessage.bind(persister)
    persister.saveMessage = async (sessionId, m) => {
      writes.push(String(m.content))
      if (fail) throw new Error('down')
      return original(sessionId, m)
    }
    const queue = new WriteQueue(persister, 's', { maxAttempts: 1, initialDelayMs: 1 })
    void queue.saveMessage(message('partial', true))
    await expect(queue.flush()).rejects.toThrow('down')
    fail = false
    void queue.saveMessage(message('final'))
    void queue.saveMessage(message('final 2'))
    await queue.flush()
    expect(writes).toEqual(['partial', 'final 2'])
    expect((await persister.getMessages('s'))[0]).toEqual(message('final 2'))
  })
})

describe('rejectUnknownOptions', () => {
  const known = ['baseURL', 'apiKey', 'idleTimeoutMs']
  it('passes known keys and names the closest known key of an unknown one', () => {
    expect(() => rejectUnknownOptions({ apiKey: 'k', baseURL: undefined }, known, 'Thing')).not.toThrow()
    expect(() => rejectUnknownOptions({ baseUrl: 'x' }, known, 'Thing')).toThrow(
      new ConfigurationError("Unknown Thing option 'baseUrl' — did you mean 'baseURL'?"),
    )
    expect(() => rejectUnknownOptions({ color: 'red' }, known, 'Thing')).toThrow(
      "Unknown Thing option 'color'",
    )
  })

  it('refuses options that are not an object', () => {
    for (const value of [null, 'x', 42, ['apiKey']]) {
      expect(() => rejectUnknownOptions(value, known, 'Thing')).toThrow(ConfigurationError)
    }
    expect(() => rejectUnknownOptions(null, known, 'Thing')).toThrow(
      'Thing options must be an object, got null.',
    )
  })
})
