import { type FakeProvider, type Scenario, startFakeProvider } from '@agentx/contract-tests'
import {
  type AdapterMessage,
  type AdapterStreamOptions,
  createAgent,
  InMemoryPersister,
  isAdapterError,
  ValidationError,
} from '@agentx/core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { DIALECT_FIXTURES, type DialectFixture } from './dialect-fixtures.js'

// One behaviour for every provider: each case below once differed between the adapters.

const API_KEY = 'sk-parity-0123456789abcdef-SECRET'
const LONG_TEXT = 'The quick brown fox jumps over the lazy dog, twice over.'

interface Outcome {
  events: AdapterMessage[]
  error: unknown
}

async function run(iterable: AsyncIterable<AdapterMessage>): Promise<Outcome> {
  const events: AdapterMessage[] = []
  try {
    for await (const event of iterable) events.push(event)
    return { events, error: undefined }
  } catch (error) {
    return { events, error }
  }
}

function text(delivery: Scenario['delivery'] = {}): Scenario {
  return {
    response: {
      blocks: [{ type: 'text', text: LONG_TEXT }],
      stopReason: 'end_turn',
      usage: { inputTokens: 5, outputTokens: 9 },
      deltaSize: 4,
    },
    delivery,
  }
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Runs `body` with `name` set to `value` in the environment, restoring it afterwards. */
async function withEnv(name: string, value: string, body: () => Promise<void> | void): Promise<void> {
  const saved = process.env[name]
  process.env[name] = value
  try {
    await body()
  } finally {
    if (saved === undefined) delete process.env[name]
    else process.env[name] = saved
  }
}

describe.each(DIALECT_FIXTURES)('$name', (fixture: DialectFixture) => {
  let fake: FakeProvider
  const options: AdapterStreamOptions = { model: 'parity-model', history: [] }
  const adapter = (extra: { idleTimeoutMs?: unknown; apiVersion?: string } = {}) =>
    fixture.create({ apiKey: API_KEY, baseURL: fake.baseURL, ...extra })

  beforeAll(async () => {
    fake = await startFakeProvider({ dialect: fixture.dialect })
  })
  afterAll(async () => {
    await fake.close()
  })
  afterEach(() => {
    fake.reset()
  })

  it('answers a malformed frame with the one protocol error: server, not retryable, the frame quoted', async () => {
    fake.enqueue(text({ malformedFrame: 3 }))
    const { events, error } = await run(adapter().stream('Hi', options))
    expect(events.some((event) => event.type === 'message')).toBe(false)
    expect(error).toMatchObject({
      name: 'AdapterError',
      kind: 'server',
      retryable: false,
      provider: fixture.provider,
      message: `${fixture.label} sent a malformed stream frame (protocol error).`,
    })
    const excerpt = (error as { cause?: { excerpt?: unknown } }).cause?.excerpt
    const sent = /data: ?(.*)/.exec(fixture.dialect.encodeMalformedFrame())?.[1] ?? '?'
    expect(excerpt).toBe(sent)
  })

  it('refuses providerOptions that are not an object the one way: ValidationError naming option and provider, nothing sent', async () => {
    for (const value of ['fast', [], null]) {
      const { error } = await run(
        adapter().stream('Hi', { ...options, providerOptions: { [fixture.provider]: value } }),
      )
      expect(error).toBeInstanceOf(ValidationError)
      expect((error as Error).message).toMatch(
        new RegExp(
          `^Invalid providerOptions\\.${fixture.provider} for the ${fixture.label} adapter \\(provider '${fixture.provider}'\\): expected an object of request fields`,
        ),
      )
    }
    expect(fake.requests).toHaveLength(0)
  })

  it('refuses an option the provider cannot take before the request, naming option and provider', async () => {
    const { error } = await run(adapter().stream('Hi', { ...options, ...fixture.unsupported.options }))
    expect(error).toBeInstanceOf(ValidationError)
    expect((error as Error).message).toContain(fixture.unsupported.option)
    expect((error as Error).message).toContain(
      `the ${fixture.label} adapter (provider '${fixture.provider}')`,
    )
    expect(fake.requests).toHaveLength(0)
  })

  it('refuses such an option through the agent before anything is stored: the session is not poisoned', async () => {
    const persister = new InMemoryPersister()
    const agent = createAgent({ model: 'parity-model' }, { adapter: adapter(), persister })
    const session = await agent.createSession()
    const refused = [fixture.unsupported.options, { providerOptions: { [fixture.provider]: 'fast' } }]
    for (const sendOptions of refused) {
      await expect(session.send('REFUSED TEXT', sendOptions)).rejects.toBeInstanceOf(ValidationError)
    }
    expect(fake.requests).toHaveLength(0)
    expect(session.state).toBe('created')
    expect(await persister.getMessages(session.id)).toEqual([])
    fake.enqueue(text())
    expect((await session.send('good text')).text).toBe(LONG_TEXT)
    expect(fake.requests).toHaveLength(1)
    expect(fake.requests[0]!.received.body).not.toContain('REFUSED TEXT')
    await agent.close()
  })

  it('refuses a tool name the provider refuses before anything is stored or sent, and takes a valid one', async () => {
    const persister = new InMemoryPersister()
    const agent = createAgent({ model: 'parity-model' }, { adapter: adapter(), persister })
    const session = await agent.createSession()
    const named = (name: string) => ({
      name,
      description: 'd',
      inputSchema: { type: 'object' },
      execute: () => 'x',
    })
    for (const name of ['get weather', 'x'.repeat(129), 'ünïcode']) {
      // Before, sent as is: the provider answered 400 after the user message was stored.
      const refused = session.send('REFUSED TEXT', { tools: [named(name)] })
      await expect(refused).rejects.toBeInstanceOf(ValidationError)
      await expect(refused).rejects.toThrow(
        `is not accepted by the ${fixture.label} API (provider '${fixture.provider}'): a tool name must be`,
      )
    }
    expect(fake.requests).toHaveLength(0)
    expect(await persister.getMessages(session.id)).toEqual([])
    fake.enqueue(text())
    expect((await session.send('good text', { tools: [named('get_weather-2')] })).text).toBe(LONG_TEXT)
    await agent.close()
  })

  it('checks maxOutputTokens and temperature of a send the one way, before the request', async () => {
    const cases: Array<[Partial<AdapterStreamOptions>, string]> = [
      [{ maxOutputTokens: 0 }, 'maxOutputTokens'],
      [{ maxOutputTokens: 2.5 }, 'maxOutputTokens'],
      [{ temperature: -1 }, 'temperature'],
      [{ temperature: Number.NaN }, 'temperature'],
    ]
    for (const [extra, option] of cases) {
      const { error } = await run(adapter().stream('Hi', { ...options, ...extra }))
      expect(error).toBeInstanceOf(ValidationError)
      expect((error as Error).message).toMatch(
        new RegExp(
          `^Invalid ${option} for the ${fixture.label} adapter \\(provider '${fixture.provider}'\\)`,
        ),
      )
    }
    expect(fake.requests).toHaveLength(0)
  })

  it('checks the structured output of a send the one way, before the request', async () => {
    const schema = { type: 'object', properties: {} }
    for (const output of [{ schema }, { name: 'x', schema: 'object' }, { name: 'x', schema: [] }, 'json']) {
      const { error } = await run(adapter().stream('Hi', { ...options, output: output as never }))
      expect(error).toBeInstanceOf(ValidationError)
      expect((error as Error).message).toMatch(
        new RegExp(
          `^Invalid output for the ${fixture.label} adapter \\(provider '${fixture.provider}'\\): expected an object \\{ name, schema \\}`,
        ),
      )
    }
    expect(fake.requests).toHaveLength(0)
  })

  it('refuses providerOptions that set the structured-output field next to output, the one way', async () => {
    const { error } = await run(
      adapter().stream('Hi', {
        ...options,
        output: { name: 'result', schema: { type: 'object', properties: {} } },
        providerOptions: { [fixture.provider]: fixture.outputField.providerOptions },
      }),
    )
    expect(error).toBeInstanceOf(ValidationError)
    expect((error as Error).message).toBe(
      `providerOptions.${fixture.provider}.${fixture.outputField.field} cannot be set together with output for the ${fixture.label} adapter (provider '${fixture.provider}'): the adapter sends it for output; leave one of them out.`,
    )
    expect(fake.requests).toHaveLength(0)
  })

  it('validates idleTimeoutMs the one way, and takes Infinity to disable it', async () => {
    for (const value of [0, -5, Number.NaN, '100']) {
      expect(() => adapter({ idleTimeoutMs: value })).toThrow(ValidationError)
      expect(() => adapter({ idleTimeoutMs: value })).toThrow(
        `Invalid idleTimeoutMs for the ${fixture.label} adapter (provider '${fixture.provider}'): expected a positive number of milliseconds or Infinity`,
      )
    }
    fake.enqueue(text())
    const { events, error } = await run(
      adapter({ idleTimeoutMs: Number.POSITIVE_INFINITY }).stream('Hi', options),
    )
    expect(error).toBeUndefined()
    expect(events.at(-1)).toMatchObject({ type: 'message' })
  })

  it('does not count the time the caller holds an event against the idle timeout', async () => {
    fake.enqueue(text())
    // Generous against a loaded machine: the first byte must arrive within the timeout, then the
    // caller holds the event for more than twice as long.
    const iterator = adapter({ idleTimeoutMs: 1_000 }).stream('Hi', options)[Symbol.asyncIterator]()
    const first = await iterator.next()
    expect(first.value).toMatchObject({ type: 'text-delta' })
    await delay(2_500)
    const rest: AdapterMessage[] = []
    for (;;) {
      const next = await iterator.next()
      if (next.done) break
      rest.push(next.value)
    }
    expect(rest.at(-1)).toMatchObject({ type: 'message' })
  })

  it('still fails a provider that stays silent longer than the idle timeout, with kind timeout', async () => {
    fake.enqueue(text({ pauseBeforeFrame: 3, pauseMs: 6_000 }))
    const { events, error } = await run(adapter({ idleTimeoutMs: 1_000 }).stream('Hi', options))
    expect(events.some((event) => event.type === 'message')).toBe(false)
    expect(error).toMatchObject({
      kind: 'timeout',
      retryable: true,
      message: `${fixture.label} sent nothing for 1000 ms; the request was cancelled (idle timeout).`,
    })
  })

  it('gives the same advice for a 404 and for an invalid key', async () => {
    fake.enqueue({ httpError: { kind: 'not_found' } }, { httpError: { kind: 'authentication' } })
    const notFound = (await run(adapter().stream('Hi', options))).error as Error
    const invalidKey = (await run(adapter().stream('Hi', options))).error as Error
    expect(notFound).toMatchObject({ kind: 'not_found', retryable: false })
    expect(notFound.message).toMatch(new RegExp(`^${fixture.label} answered HTTP 404`))
    expect(notFound.message).toContain('Check the model name and the base URL.')
    expect(invalidKey).toMatchObject({ kind: 'authentication', retryable: false })
    expect(invalidKey.message).toContain(`Check the API key (the apiKey option or ${fixture.apiKeyEnv}).`)
  })

  it('redacts the key but keeps the word after "Bearer" in the provider’s help text', async () => {
    fake.enqueue({
      httpError: {
        kind: 'authentication',
        message: `Send the key as a Bearer token in the Authorization header; ${API_KEY} was rejected.`,
      },
    })
    const { error } = await run(adapter().stream('Hi', options))
    const message = (error as Error).message
    expect(message).toContain('as a Bearer token in the Authorization header; [redacted] was rejected.')
    expect(JSON.stringify([message, (error as Error).stack, String((error as Error).cause)])).not.toContain(
      API_KEY,
    )
  })

  it('describes a refused connection once, without repeating itself', async () => {
    const closed = await startFakeProvider({ dialect: fixture.dialect })
    const baseURL = closed.baseURL
    await closed.close()
    const { error } = await run(fixture.create({ apiKey: API_KEY, baseURL }).stream('Hi', options))
    expect(error).toMatchObject({ kind: 'network', retryable: true, provider: fixture.provider })
    const message = (error as Error).message
    expect(message).toMatch(new RegExp(`^The connection to ${fixture.label} failed: `))
    expect(message.match(/ECONNREFUSED/g)).toHaveLength(1)
    expect(message).not.toMatch(/fetch failed|Connection error/)
  })

  it('words aborts, cut streams and in-stream errors alike', async () => {
    const controller = new AbortController()
    controller.abort()
    const aborted = (await run(adapter().stream('Hi', { ...options, signal: controller.signal }))).error
    expect(aborted).toMatchObject({ kind: 'aborted', message: `The ${fixture.label} request was aborted.` })

    fake.enqueue(text({ truncateAfterFrame: 4 }), {
      ...text({ errorFrameAfter: 4 }),
      streamError: { kind: 'server' },
    })
    const cut = (await run(adapter().stream('Hi', options))).error as Error
    expect(cut).toMatchObject({ kind: 'network', retryable: true })
    expect(cut.message).toMatch(
      new RegExp(`^The ${fixture.label} stream ended before .*: the response is incomplete\\.$`),
    )
    const inStream = (await run(adapter().stream('Hi', options))).error as Error
    expect(isAdapterError(inStream)).toBe(true)
    expect(inStream).toMatchObject({ kind: 'server', retryable: true })
    expect(inStream.message).toMatch(new RegExp(`^${fixture.label} reported an error in the stream`))
  })

  it(`takes the base URL from its environment variable and the API version from its option`, async () => {
    await withEnv(fixture.baseUrlEnv, fake.baseURL, async () => {
      fake.enqueue(text())
      const { error } = await run(
        fixture.create({ apiKey: API_KEY, apiVersion: fixture.apiVersion.value }).stream('Hi', options),
      )
      expect(error).toBeUndefined()
    })
    expect(fake.requests).toHaveLength(1)
    expect(fixture.apiVersion.seenIn(fake.requests[0]!.received)).toBe(true)
    await withEnv(fixture.baseUrlEnv, 'not a url', () => {
      expect(() => fixture.create({ apiKey: API_KEY })).toThrow(
        `Invalid ${fixture.baseUrlEnv} for the ${fixture.label} adapter (provider '${fixture.provider}')`,
      )
    })
  })
})
