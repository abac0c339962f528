import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AnyMessage, ContentBlock } from '@agentx/core'
import { ScriptedAdapter } from '@agentx/core/testing'
import { createSqlitePersister } from '@agentx/persister-sqlite'
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Playground, type StartPlaygroundOptions, startPlayground } from '../src/start-playground.js'
import { api, deltaText, rawRequest, reattach, retrySend, type ServerEvent, sendMessage } from './sse.js'

const FAST_RETRY = { maxRetries: 1, initialDelayMs: 1, maxDelayMs: 5 }

let workspace: string
const running: Playground[] = []

async function start(options: StartPlaygroundOptions = {}): Promise<Playground> {
  const playground = await startPlayground({
    env: {},
    workspace,
    port: 0,
    demoDelayMs: 0,
    retry: FAST_RETRY,
    ...options,
  })
  running.push(playground)
  return playground
}

async function stop(playground: Playground): Promise<void> {
  running.splice(running.indexOf(playground), 1)
  await playground.close()
}

async function createSession(
  playground: Playground,
  body: Record<string, unknown> = { provider: 'demo' },
): Promise<string> {
  const created = await api(playground.url, 'POST', '/api/sessions', body)
  expect(created.status).toBe(201)
  return created.body.session.id as string
}

function textOf(content: string | ContentBlock[]): string {
  if (typeof content === 'string') return content
  return content.map((block) => (block.type === 'text' ? block.text : '')).join('')
}

function eventTypes(events: readonly ServerEvent[]): string[] {
  return events
    .map((event) => event.event)
    .filter((type, index, all) => type !== 'text-delta' || all[index - 1] !== 'text-delta')
}

const workspaces: string[] = []

beforeEach(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'agentx-playground-api-'))
  workspaces.push(workspace)
})

afterEach(async () => {
  await Promise.all(running.splice(0).map((playground) => playground.close()))
})

afterAll(async () => {
  await Promise.all(workspaces.map((folder) => rm(folder, { recursive: true, force: true })))
})

describe('playground API', () => {
  it('binds to 127.0.0.1 by default and stores sessions in <workspace>/.agentx/data/agent.db', async () => {
    const playground = await start()
    expect(playground.host).toBe('127.0.0.1')
    expect(playground.url).toBe(`http://127.0.0.1:${playground.port}`)
    expect(playground.storage).toEqual({
      kind: 'sqlite',
      location: join(workspace, '.agentx', 'data', 'agent.db'),
    })
  })

  it('lists the offline demo provider first, plus every provider whose key is set, never sending a key', async () => {
    const anthropicKey = 'sk-ant-test-5f2d9a7e1c'
    const openaiKey = 'sk-openai-test-8b3c0d4e'
    const received: Array<{ specifier: string; options: unknown }> = []
    const playground = await start({
      env: { ANTHROPIC_API_KEY: anthropicKey, OPENAI_API_KEY: openaiKey },
      importModule: async (specifier) => {
        if (specifier === '@agentx/adapter-claude') {
          return {
            createClaudeAdapter: () => {
              throw new Error(`invalid key ${anthropicKey}`)
            },
          }
        }
        return {
          createOpenAIAdapter: (options: unknown) => {
            received.push({ specifier, options })
            return new ScriptedAdapter([], { name: 'openai' })
          },
        }
      },
    })
    const response = await fetch(`${playground.url}/api/providers`)
    const text = await response.text()
    expect(response.status).toBe(200)
    expect(text).not.toContain(anthropicKey)
    expect(text).not.toContain(openaiKey)
    const { providers } = JSON.parse(text) as { providers: Array<Record<string, unknown>> }
    expect(providers.map((provider) => [provider.id, provider.available, provider.offline])).toEqual([
      ['demo', true, true],
      ['claude', false, false],
      ['openai', true, false],
    ])
    expect(providers[0]?.label).toBe('Demo (offline)')
    expect(providers[1]?.unavailableReason).toContain('[redacted]')
    expect(received).toEqual([{ specifier: '@agentx/adapter-openai', options: { apiKey: openaiKey } }])
  })

  it('creates a session with a system prompt, stored and shown in its view', async () => {
    const playground = await start()
    const created = await api(playground.url, 'POST', '/api/sessions', {
      provider: 'demo',
      systemPrompt: 'Be brief.',
    })
    expect(created.body.session.systemPrompt).toBe('Be brief.')
    expect((await playground.persister.getSession(created.body.session.id))?.systemPrompt).toBe('Be brief.')
    const plain = await api(playground.url, 'POST', '/api/sessions', { provider: 'demo' })
    expect(plain.body.session).not.toHaveProperty('systemPrompt')
  })

  it('creates a session that is persisted before the response, tagged with its provider', async () => {
    const playground = await start()
    const created = await api(playground.url, 'POST', '/api/sessions', { provider: 'demo' })
    expect(created.status).toBe(201)
    expect(created.body.session).toMatchObject({
      provider: 'demo',
      model: 'agentx-demo-1',
      state: 'created',
      summary: '',
    })
    const stored = await playground.persister.getSession(created.body.session.id)
    expect(stored).toMatchObject({
      state: 'created',
      model: 'agentx-demo-1',
      metadata: { provider: 'demo' },
      appName: 'agentx-playground',
    })
  })

  it('streams a reply token by token as SSE session events and persists every message', async () => {
    const playground = await start()
    const id = await createSession(playground)
    const reply = await sendMessage(playground.url, id, 'What is 12 * (3 + 4)?')
    expect(reply.status).toBe(200)
    expect(reply.contentType).toMatch(/^text\/event-stream/)
    expect(eventTypes(reply.events)).toEqual([
      'message', // the user message, persisted first
      'state',
      'step-start',
      'text-delta',
      'tool-call',
      'usage',
      'step-finish',
      'message', // agent message with the tool call
      'tool-result',
      'message', // tool message
      'step-start',
      'text-delta',
      'usage',
      'step-finish',
      'message', // final agent message
      'state',
      'done',
      'end',
    ])
    // Every session event carries its run-local id, so a client can resume after it.
    const ids = reply.events.filter((event) => event.event !== 'end').map((event) => Number(event.id))
    expect(ids).toEqual(ids.map((_, index) => index + 1))
    expect(reply.events.filter((event) => event.event === 'text-delta').length).toBeGreaterThan(5)
    const toolResult = reply.events.find((event) => event.event === 'tool-result')?.data
    expect(JSON.stringify(toolResult?.content)).toContain('"result\\":84')
    const done = reply.events.find((event) => event.event === 'done')?.data as { result: { text: string } }
    expect(done.result.text).toContain('**84**')

    const stored = await playground.persister.getMessages(id)
    expect(stored.map((message) => message.type)).toEqual(['user', 'agent', 'tool', 'agent'])
    expect(stored[0]?.content).toBe('What is 12 * (3 + 4)?')
    const streamedText = deltaText(reply.events)
    expect(streamedText).toBe(textOf(stored[1]!.content) + textOf(stored[3]!.content))
    const detail = await api(playground.url, 'GET', `/api/sessions/${id}`)
    expect(detail.status).toBe(200)
    expect(detail.body.messages).toEqual(JSON.parse(JSON.stringify(stored)))
    expect(detail.body.session).toMatchObject({ id, state: 'idle', summary: 'What is 12 * (3 + 4)?' })
    expect(detail.body.session.tokenUsage.totalTokens).toBeGreaterThan(0)
  })

  it('routes each session to the adapter of its provider and lists all providers together', async () => {
    const openai = new ScriptedAdapter(
      [
        [
          { type: 'text-delta', text: 'Hi from ' },
          { type: 'text-delta', text: 'OpenAI' },
          { type: 'usage', usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 } },
          { type: 'message', content: [{ type: 'text', text: 'Hi from OpenAI' }], stopReason: 'end_turn' },
        ],
      ],
      { name: 'openai' },
    )
    const playground = await start({
      env: { OPENAI_API_KEY: 'sk-test-routing' },
      importModule: async () => ({ createOpenAIAdapter: () => openai }),
    })
    const demoId = await createSession(playground, { provider: 'demo' })
    await sendMessage(playground.url, demoId, 'hello')
    const openaiId = await createSession(playground, {
      provider: 'openai',
      model: 'gpt-test',
      systemPrompt: 'Be brief.',
    })
    const reply = await sendMessage(playground.url, openaiId, 'hello openai')
    expect(deltaText(reply.events)).toBe('Hi from OpenAI')
    expect(openai.calls).toHaveLength(1)
    expect(openai.calls[0]?.prompt).toBe('hello openai')
    expect(openai.calls[0]?.options.model).toBe('gpt-test')
    expect(openai.calls[0]?.options.systemPrompt).toBe('Be brief.')

    const list = await api(playground.url, 'GET', '/api/sessions')
    expect(
      list.body.sessions.map((session: { id: string; provider: string; model: string }) => [
        session.id,
        session.provider,
        session.model,
      ]),
    ).toEqual([
      [openaiId, 'openai', 'gpt-test'],
      [demoId, 'demo', 'agentx-demo-1'],
    ])
    expect(list.body.sessions[0].tokenUsage).toEqual({ inputTokens: 3, outputTokens: 2, totalTokens: 5 })
  })

  it('lists sessions newest activity first with summary, model, state and token usage', async () => {
    const playground = await start()
    const first = await createSession(playground)
    const second = await createSession(playground)
    await sendMessage(playground.url, second, 'hello there')
    await sendMessage(playground.url, first, 'a later message')
    const list = await api(playground.url, 'GET', '/api/sessions')
    const ids = list.body.sessions.map((session: { id: string }) => session.id)
    expect(ids.indexOf(first)).toBeLessThan(ids.indexOf(second))
    const row = list.body.sessions.find((session: { id: string }) => session.id === first)
    expect(row).toMatchObject({
      summary: 'a later message',
      model: 'agentx-demo-1',
      provider: 'demo',
      state: 'idle',
      canSend: true,
    })
    expect(row.tokenUsage.totalTokens).toBe(row.tokenUsage.inputTokens + row.tokenUsage.outputTokens)
    expect(row.tokenUsage.totalTokens).toBeGreaterThan(0)
  })

  it('pages through the session list with limit and offset', async () => {
    const playground = await start()
    const ids = [
      await createSession(playground),
      await createSession(playground),
      await createSession(playground),
    ]
    const first = await api(playground.url, 'GET', '/api/sessions?limit=2')
    const second = await api(playground.url, 'GET', '/api/sessions?limit=2&offset=2')
    const listed = [...first.body.sessions, ...second.body.sessions].map(
      (session: { id: string }) => session.id,
    )
    expect(first.body.sessions).toHaveLength(2)
    expect(listed.sort()).toEqual([...ids].sort())
    expect((await api(playground.url, 'GET', '/api/sessions?limit=-1')).body.error.code).toBe('VALIDATION')
    expect((await api(playground.url, 'GET', '/api/sessions?offset=x')).status).toBe(400)
  })

  it('aborts a streaming reply, keeps the partial text as incomplete and accepts the next send', async () => {
    const playground = await start({ demoDelayMs: 20 })
    const id = await createSession(playground)
    let abortStatus: number | undefined
    const reply = await sendMessage(playground.url, id, 'tell me a long story', async (event) => {
      if (event.event === 'text-delta' && abortStatus === undefined) {
        abortStatus = (await api(playground.url, 'POST', `/api/sessions/${id}/abort`)).status
      }
    })
    expect(abortStatus).toBe(202)
    const states = reply.events.filter((event) => event.event === 'state').map((event) => event.data.state)
    expect(states).toEqual(['active', 'aborted'])
    expect(reply.events.some((event) => event.event === 'done')).toBe(false)

    const stored = await playground.persister.getMessages(id)
    const partial = stored.find((message) => message.type === 'agent') as AnyMessage
    expect(partial).toMatchObject({ incomplete: true, stopReason: 'aborted' })
    expect(textOf(partial.content).length).toBeGreaterThan(0)
    expect(textOf(partial.content).length).toBeLessThan(300)
    expect((await playground.persister.getSession(id))?.state).toBe('aborted')

    const next = await sendMessage(playground.url, id, 'hello again')
    expect(next.events.some((event) => event.event === 'done')).toBe(true)
    expect((await playground.persister.getMessages(id)).map((message) => message.type)).toEqual([
      'user',
      'agent',
      'user',
      'agent',
    ])
  })

  it('keeps the reply running when the client disconnects, and a reopened client reattaches to it', async () => {
    const playground = await start({ demoDelayMs: 15 })
    const id = await createSession(playground)
    // The first client goes away after a few words (a reload, a closed tab).
    const first = await sendMessage(playground.url, id, 'tell me a long story', (event) =>
      event.event === 'text-delta' ? 'stop' : undefined,
    )
    expect(first.events.some((event) => event.event === 'text-delta')).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect((await playground.persister.getSession(id))?.state).toBe('active')
    // The reopened page reads the session: it is running, with where to replay the reply from.
    const detail = await api(playground.url, 'GET', `/api/sessions/${id}`)
    expect(detail.body.session.state).toBe('active')
    expect(detail.body.running).toMatchObject({ resumeAfter: expect.any(Number) })
    expect(detail.body.messages.map((message: AnyMessage) => message.type)).toEqual(['user'])
    const reattached = await reattach(playground.url, id, { after: detail.body.running.resumeAfter })
    expect(reattached.status).toBe(200)
    // The replay rebuilds the whole reply from its first word, then goes on live to the end.
    const stored = await playground.persister.getMessages(id)
    expect(stored.map((message) => [message.type, message.incomplete])).toEqual([
      ['user', undefined],
      ['agent', undefined],
    ])
    expect(deltaText(reattached.events)).toBe(textOf(stored[1]!.content))
    expect(eventTypes(reattached.events).slice(-4)).toEqual(['message', 'state', 'done', 'end'])
    expect((await playground.persister.getSession(id))?.state).toBe('idle')
    // Nothing runs any more: 204.
    expect((await reattach(playground.url, id)).status).toBe(204)
  })

  it('reattaches from the current point, or after a Last-Event-ID; 404 for an unknown session', async () => {
    const playground = await start({ demoDelayMs: 15 })
    const id = await createSession(playground)
    const firstIds: number[] = []
    await sendMessage(playground.url, id, 'tell me a long story', (event) => {
      firstIds.push(Number(event.id))
      return firstIds.length === 6 ? 'stop' : undefined
    })
    const [fromNow, fromId] = await Promise.all([
      reattach(playground.url, id),
      reattach(playground.url, id, { lastEventId: String(firstIds[4]) }),
    ])
    const nowIds = fromNow.events.filter((event) => event.id !== undefined).map((event) => Number(event.id))
    const resumedIds = fromId.events
      .filter((event) => event.id !== undefined)
      .map((event) => Number(event.id))
    // After a Last-Event-ID: every event after it, none missing, none twice.
    expect(resumedIds).toEqual(resumedIds.map((_, index) => firstIds[4]! + 1 + index))
    // From the current point: a later start, the same end.
    expect(nowIds[0]).toBeGreaterThan(firstIds[5]!)
    expect(nowIds.at(-1)).toBe(resumedIds.at(-1))
    expect(fromNow.events.at(-1)?.event).toBe('end')
    expect((await reattach(playground.url, 'no-such-session')).status).toBe(404)
  })

  it('lets a second client watch and stop a reply another client started', async () => {
    const playground = await start({ demoDelayMs: 20 })
    const id = await createSession(playground)
    let watched: Awaited<ReturnType<typeof reattach>> | undefined
    const reply = await sendMessage(playground.url, id, 'tell me a long story', async (event) => {
      if (event.event === 'text-delta' && watched === undefined) {
        watched = await reattach(playground.url, id, {
          onEvent: async (seen) => {
            if (seen.event === 'text-delta') await api(playground.url, 'POST', `/api/sessions/${id}/abort`)
          },
        })
      }
    })
    expect(
      watched?.events.filter((event) => event.event === 'state').map((event) => event.data.state),
    ).toEqual(['aborted'])
    expect(reply.events.filter((event) => event.event === 'state').map((event) => event.data.state)).toEqual([
      'active',
      'aborted',
    ])
    expect((await playground.persister.getSession(id))?.state).toBe('aborted')
  })

  it('stores the error of a failed send, shows it after a restart, and retry() answers without a second user message', async () => {
    const first = await start()
    const id = await createSession(first)
    const failed = await sendMessage(first.url, id, '/error')
    const retry = failed.events.find((event) => event.event === 'retry')?.data as {
      attempt: number
      error: { kind: string }
    }
    expect(retry).toMatchObject({ attempt: 1, error: { kind: 'rate_limit' } })
    const errors = failed.events.filter((event) => event.event === 'error')
    expect(errors).toHaveLength(1)
    expect(errors[0]?.data.error).toMatchObject({
      name: 'AdapterError',
      kind: 'rate_limit',
      code: 'ADAPTER_RATE_LIMIT',
      provider: 'demo',
      retryable: true,
      status: 429,
    })
    expect(errors[0]?.data.error).not.toHaveProperty('stack')
    expect(failed.events.at(-1)?.event).toBe('end')
    expect((await first.persister.getSession(id))?.metadata?.lastError).toMatchObject({
      code: 'ADAPTER_RATE_LIMIT',
      kind: 'rate_limit',
      retryable: true,
    })
    await stop(first)

    const second = await start()
    const detail = await api(second.url, 'GET', `/api/sessions/${id}`)
    expect(detail.body.session.state).toBe('error')
    expect(detail.body.lastError).toMatchObject({
      code: 'ADAPTER_RATE_LIMIT',
      message: expect.stringContaining('rate limited'),
    })
    const listed = await api(second.url, 'GET', '/api/sessions')
    expect(listed.body.sessions[0].lastError).toMatchObject({ code: 'ADAPTER_RATE_LIMIT' })

    const retried = await retrySend(second.url, id)
    expect(retried.status).toBe(200)
    expect(eventTypes(retried.events).slice(0, 2)).toEqual(['state', 'step-start'])
    expect(retried.events.some((event) => event.event === 'done')).toBe(true)
    expect((await second.persister.getMessages(id)).map((message) => message.type)).toEqual(['user', 'agent'])
    expect((await second.persister.getSession(id))?.state).toBe('idle')
    const after = await api(second.url, 'GET', `/api/sessions/${id}`)
    expect(after.body).not.toHaveProperty('lastError')
    expect((await second.persister.getSession(id))?.metadata).toEqual({ provider: 'demo' })
    // Nothing left to retry: 409 SESSION_STATE, nothing written.
    const again = await retrySend(second.url, id)
    expect(again.status).toBe(409)
    expect(again.body).toMatchObject({ error: { code: 'SESSION_STATE' } })
    expect(await second.persister.getMessages(id)).toHaveLength(2)
  })

  it('keeps the partial text of a stream cut by a network error and lets a retry succeed', async () => {
    const playground = await start()
    const id = await createSession(playground)
    const failed = await sendMessage(playground.url, id, '/error stream')
    const error = failed.events.find((event) => event.event === 'error')?.data as {
      error: Record<string, unknown>
    }
    expect(error.error.kind).toBe('network')
    const stored = await playground.persister.getMessages(id)
    expect(stored[1]).toMatchObject({ type: 'agent', incomplete: true, stopReason: 'error' })
    const retried = await retrySend(playground.url, id)
    expect(retried.events.some((event) => event.event === 'done')).toBe(true)
    // The partial reply stays stored; the user message is not stored twice.
    expect(
      (await playground.persister.getMessages(id)).map((message) => [message.type, message.incomplete]),
    ).toEqual([
      ['user', undefined],
      ['agent', true],
      ['agent', undefined],
    ])
  })

  it('refuses a second send while a reply is streaming with 409 SESSION_BUSY and writes nothing', async () => {
    const playground = await start({ demoDelayMs: 20 })
    const id = await createSession(playground)
    let second: Awaited<ReturnType<typeof sendMessage>> | undefined
    await sendMessage(playground.url, id, 'tell me a long story', async (event) => {
      if (event.event === 'text-delta' && second === undefined) {
        second = await sendMessage(playground.url, id, 'interrupting')
        await api(playground.url, 'POST', `/api/sessions/${id}/abort`)
      }
    })
    expect(second?.status).toBe(409)
    expect(second?.body).toMatchObject({ error: { code: 'SESSION_BUSY' } })
    const texts = (await playground.persister.getMessages(id)).map((message) => textOf(message.content))
    expect(texts).not.toContain('interrupting')
  })

  it('deletes a session with its messages', async () => {
    const playground = await start()
    const keep = await createSession(playground)
    const id = await createSession(playground)
    await sendMessage(playground.url, id, 'hello')
    expect((await playground.persister.getMessages(id)).length).toBe(2)
    const deleted = await api(playground.url, 'DELETE', `/api/sessions/${id}`)
    expect(deleted.status).toBe(204)
    expect(await playground.persister.getSession(id)).toBeNull()
    expect(await playground.persister.getMessages(id)).toEqual([])
    expect((await api(playground.url, 'GET', `/api/sessions/${id}`)).status).toBe(404)
    expect((await api(playground.url, 'DELETE', `/api/sessions/${id}`)).status).toBe(404)
    const list = await api(playground.url, 'GET', '/api/sessions')
    expect(list.body.sessions.map((session: { id: string }) => session.id)).toContain(keep)
    expect(list.body.sessions.map((session: { id: string }) => session.id)).not.toContain(id)
  })

  it('answers bad requests with typed errors and writes nothing', async () => {
    const playground = await start()
    const id = await createSession(playground)
    expect((await api(playground.url, 'POST', '/api/sessions', { provider: 'nope' })).body.error.code).toBe(
      'VALIDATION',
    )
    expect((await api(playground.url, 'POST', '/api/sessions', { provider: 'demo', model: 42 })).status).toBe(
      400,
    )
    const empty = await sendMessage(playground.url, id, '   ')
    expect(empty.status).toBe(400)
    expect(empty.body).toMatchObject({ error: { code: 'VALIDATION' } })
    expect((await sendMessage(playground.url, 'no-such-session', 'hi')).status).toBe(404)
    expect((await api(playground.url, 'POST', '/api/sessions/no-such-session/abort')).status).toBe(404)
    expect((await api(playground.url, 'GET', '/api/nothing')).status).toBe(404)
    expect((await api(playground.url, 'PUT', '/api/sessions')).status).toBe(405)
    const notJson = await fetch(`${playground.url}/api/sessions`, {
      method: 'POST',
      body: 'provider=demo',
      headers: { 'content-type': 'text/plain' },
    })
    expect(notJson.status).toBe(415)
    const broken = await fetch(`${playground.url}/api/sessions`, {
      method: 'POST',
      body: '{',
      headers: { 'content-type': 'application/json' },
    })
    expect(broken.status).toBe(400)
    // Bytes that are not UTF-8 (a Latin-1 é) are refused, not stored as U+FFFD.
    const latin1 = await fetch(`${playground.url}/api/sessions/${id}/messages`, {
      method: 'POST',
      body: Buffer.concat([Buffer.from('{"content":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]),
      headers: { 'content-type': 'application/json' },
    })
    expect(latin1.status).toBe(415)
    expect(await latin1.json()).toMatchObject({
      error: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'The request body is not valid UTF-8.' },
    })
    // An oversized body gets its 413 (the rest is read and dropped), never a reset connection.
    for (let i = 0; i < 5; i++) {
      const huge = await fetch(`${playground.url}/api/sessions/${id}/messages`, {
        method: 'POST',
        body: JSON.stringify({ content: 'x'.repeat(3_000_000) }),
        headers: { 'content-type': 'application/json' },
      })
      expect(huge.status).toBe(413)
      expect(await huge.json()).toMatchObject({ error: { code: 'PAYLOAD_TOO_LARGE' } })
    }
    const retryField = await api(playground.url, 'POST', `/api/sessions/${id}/retry`, { content: 'again' })
    expect(retryField.status).toBe(400)
    expect(retryField.body.error.message).toContain('a retry asks again for the stored conversation')
    expect(await playground.persister.getMessages(id)).toEqual([])
    expect((await api(playground.url, 'GET', '/api/sessions')).body.sessions).toHaveLength(1)
  })

  describe('refuses foreign requests with 403', () => {
    it('refuses a foreign Host header (DNS rebinding) on the API and the UI', async () => {
      const playground = await start()
      for (const path of ['/api/sessions', '/']) {
        const refused = await rawRequest(playground.port, {
          path,
          headers: { host: `evil.example:${playground.port}` },
        })
        expect(refused.status).toBe(403)
      }
      const wrongPort = await rawRequest(playground.port, {
        path: '/api/sessions',
        headers: { host: '127.0.0.1:1' },
      })
      expect(wrongPort.status).toBe(403)
      const own = await rawRequest(playground.port, {
        path: '/api/sessions',
        headers: { host: `localhost:${playground.port}` },
      })
      expect(own.status).toBe(200)
      // A link from another site may open the page, but not call the API.
      const host = `127.0.0.1:${playground.port}`
      expect(
        (await rawRequest(playground.port, { path: '/', headers: { host, 'sec-fetch-site': 'cross-site' } }))
          .status,
      ).toBe(200)
      expect(
        (
          await rawRequest(playground.port, {
            path: '/api/sessions',
            headers: { host, 'sec-fetch-site': 'cross-site' },
          })
        ).status,
      ).toBe(403)
    })

    it('refuses cross-origin API requests, and they write nothing', async () => {
      const playground = await start()
      const host = `127.0.0.1:${playground.port}`
      const body = JSON.stringify({ provider: 'demo' })
      const post = (headers: Record<string, string>) =>
        rawRequest(playground.port, {
          method: 'POST',
          path: '/api/sessions',
          headers: { host, 'content-type': 'application/json', ...headers },
          body,
        })
      expect((await post({ origin: 'http://evil.example' })).status).toBe(403)
      expect((await post({ origin: `http://127.0.0.1:${playground.port + 1}` })).status).toBe(403)
      expect((await post({ origin: `https://${host}` })).status).toBe(403)
      expect((await post({ origin: 'null' })).status).toBe(403)
      expect((await post({ 'sec-fetch-site': 'cross-site' })).status).toBe(403)
      expect(await playground.persister.listSessions({})).toEqual([])
      const sameOrigin = await post({ origin: `http://${host}`, 'sec-fetch-site': 'same-origin' })
      expect(sameOrigin.status).toBe(201)
      expect(await playground.persister.listSessions({})).toHaveLength(1)
    })
  })

  it('serves the web UI with a strict Content-Security-Policy', async () => {
    const playground = await start()
    const page = await fetch(`${playground.url}/`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toMatch(/^text\/html/)
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(await page.text()).toContain('<script type="module" src="/app.js">')
    expect((await fetch(`${playground.url}/app.js`)).headers.get('content-type')).toMatch(/^text\/javascript/)
    expect((await fetch(`${playground.url}/../package.json`)).status).toBe(404)
    expect((await fetch(`${playground.url}/secret.txt`)).status).toBe(404)
  })

  it('serves the Markdown and highlighting libraries itself, from their installed packages, and nothing else of them', async () => {
    const playground = await start()
    const markdownIt = await fetch(`${playground.url}/vendor/markdown-it.js`)
    expect(markdownIt.status).toBe(200)
    expect(markdownIt.headers.get('content-type')).toMatch(/^text\/javascript/)
    expect(markdownIt.headers.get('content-security-policy')).toContain("script-src 'self'")
    const source = await markdownIt.text()
    expect(source).toContain('markdown-it')
    // Self-contained: an ES module that imports nothing, so the browser needs no import map.
    expect(source).not.toMatch(/^\s*import\s/m)
    expect(source).toMatch(/export\s*\{[^}]*as default/)
    for (const path of [
      '/vendor/highlight.js',
      '/vendor/highlight/typescript.js',
      '/vendor/highlight/python.js',
    ]) {
      const response = await fetch(`${playground.url}${path}`)
      expect(response.status).toBe(200)
      expect(await response.text()).toMatch(/export\s*(\{[^}]*as default|default)/)
    }
    for (const path of [
      '/vendor/highlight/php.js',
      '/vendor/markdown-it.js.map',
      '/vendor/highlight/..%2F..%2Fpackage.json',
      '/vendor/',
      '/vendor/highlight/%2e%2e/core.js',
    ]) {
      expect((await fetch(`${playground.url}${path}`)).status).toBe(404)
    }
    // The page's modules import only what the server serves.
    const modules = ['/markdown.js', '/code-highlight.js']
    for (const module of modules) {
      const text = await (await fetch(`${playground.url}${module}`)).text()
      for (const [, imported] of text.matchAll(/^import .* from '([^']+)'/gm)) {
        const url = new URL(imported!, `${playground.url}${module}`)
        expect(url.origin).toBe(playground.url)
        expect((await fetch(url)).status).toBe(200)
      }
    }
  })

  it('shows every session and message again after a restart', async () => {
    const first = await start()
    const id = await createSession(first)
    await sendMessage(first.url, id, 'remember me')
    const before = await api(first.url, 'GET', `/api/sessions/${id}`)
    await stop(first)

    const second = await start()
    const list = await api(second.url, 'GET', '/api/sessions')
    expect(list.body.sessions.map((session: { id: string }) => session.id)).toContain(id)
    const after = await api(second.url, 'GET', `/api/sessions/${id}`)
    expect(after.body.messages).toEqual(before.body.messages)
    expect(after.body.session).toMatchObject({
      summary: 'remember me',
      state: 'idle',
      tokenUsage: before.body.session.tokenUsage,
    })
    const more = await sendMessage(second.url, id, 'hello again')
    expect(more.events.some((event) => event.event === 'done')).toBe(true)
    expect((await second.persister.getMessages(id)).map((message) => message.seq)).toEqual([0, 1, 2, 3])
  })

  it('closing the playground mid-reply ends the stream as aborted and keeps the partial reply on disk', async () => {
    const playground = await start({ demoDelayMs: 20 })
    const id = await createSession(playground)
    let closing: Promise<void> | undefined
    const reply = await sendMessage(playground.url, id, 'tell me a long story', (event) => {
      if (event.event === 'text-delta' && closing === undefined) closing = stop(playground)
    })
    await closing
    const states = reply.events.filter((event) => event.event === 'state').map((event) => event.data.state)
    expect(states).toEqual(['active', 'aborted'])
    const reopened = createSqlitePersister({ filename: join(workspace, '.agentx', 'data', 'agent.db') })
    try {
      expect((await reopened.getSession(id))?.state).toBe('aborted')
      // Recorded as cut by the server, not as stopped by the user.
      expect((await reopened.getSession(id))?.metadata?.lastError).toMatchObject({ code: 'SERVER_STOPPED' })
      const messages = await reopened.getMessages(id)
      expect(messages.map((message) => [message.type, message.incomplete])).toEqual([
        ['user', undefined],
        ['agent', true],
      ])
    } finally {
      await reopened.close()
    }
  })

  it('marks a session whose process died mid-reply as interrupted on start, and it takes the next message', async () => {
    const filename = join(workspace, 'crashed.db')
    const setup = createSqlitePersister({ filename })
    const now = new Date().toISOString()
    await setup.saveSession({
      id: 'crashed',
      summary: 'tell me a long story',
      createdAt: now,
      lastActivity: now,
      state: 'active',
      model: 'agentx-demo-1',
      appName: 'agentx-playground',
      metadata: { provider: 'demo' },
      tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    })
    await setup.saveMessage('crashed', {
      id: 'u0',
      sessionId: 'crashed',
      seq: 0,
      type: 'user',
      content: 'tell me a long story',
      timestamp: now,
    })
    await setup.close()
    const playground = await start({ persister: createSqlitePersister({ filename }) })
    const list = await api(playground.url, 'GET', '/api/sessions')
    expect(list.body.sessions).toMatchObject([{ id: 'crashed', state: 'interrupted' }])
    const reply = await sendMessage(playground.url, 'crashed', 'hello')
    expect(reply.events.find((event) => event.event === 'state')?.data).toMatchObject({
      state: 'active',
      previous: 'interrupted',
    })
    expect((await playground.persister.getMessages('crashed')).map((message) => message.seq)).toEqual([
      0, 1, 2,
    ])
  })

  it('answers an abort without a running reply with aborted: false and changes nothing', async () => {
    const playground = await start()
    const id = await createSession(playground)
    await sendMessage(playground.url, id, 'hello')
    const answer = await api(playground.url, 'POST', `/api/sessions/${id}/abort`)
    expect(answer).toEqual({ status: 202, body: { aborted: false } })
    expect((await playground.persister.getSession(id))?.state).toBe('idle')
  })

  it('keeps sessions of a provider that is no longer configured readable, and refuses to send to them', async () => {
    const filename = join(workspace, 'orphan.db')
    const setup = createSqlitePersister({ filename })
    const now = new Date().toISOString()
    await setup.saveSession({
      id: 'orphan',
      summary: 'old claude chat',
      createdAt: now,
      lastActivity: now,
      state: 'idle',
      model: 'claude-x',
      appName: 'agentx-playground',
      metadata: { provider: 'claude' },
      tokenUsage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
    })
    await setup.saveMessage('orphan', {
      id: 'm1',
      sessionId: 'orphan',
      seq: 0,
      type: 'user',
      content: 'hi',
      timestamp: now,
    })
    await setup.close()
    const playground = await start({ persister: createSqlitePersister({ filename }) })
    const detail = await api(playground.url, 'GET', '/api/sessions/orphan')
    expect(detail.body.session).toMatchObject({ provider: 'claude', canSend: false })
    expect(detail.body.messages).toHaveLength(1)
    const refused = await sendMessage(playground.url, 'orphan', 'hello?')
    expect(refused.status).toBe(503)
    expect(refused.body).toMatchObject({ error: { code: 'CONFIGURATION' } })
    expect(await playground.persister.getMessages('orphan')).toHaveLength(1)
    expect((await api(playground.url, 'DELETE', '/api/sessions/orphan')).status).toBe(204)
    expect(await playground.persister.getSession('orphan')).toBeNull()
  })
})
