import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AnyMessage } from '@agentx/core'
import { ScriptedAdapter } from '@agentx/core/testing'
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DEMO_COMPACT_INPUT_TOKENS, DEMO_JSON_OUTPUT } from '../src/demo-adapter.js'
import { DEMO_OUTPUT } from '../src/demo-output.js'
import { type Playground, type StartPlaygroundOptions, startPlayground } from '../src/start-playground.js'
import {
  api,
  deltaText,
  rawRequest,
  retrySend,
  type ServerEvent,
  type StreamReply,
  sendMessage,
} from './sse.js'

let workspace: string
const running: Playground[] = []
const workspaces: string[] = []

async function start(options: StartPlaygroundOptions = {}): Promise<Playground> {
  const playground = await startPlayground({
    env: {},
    workspace,
    port: 0,
    demoDelayMs: 0,
    retry: { maxRetries: 1, initialDelayMs: 1, maxDelayMs: 5 },
    ...options,
  })
  running.push(playground)
  return playground
}

async function createSession(playground: Playground, body: Record<string, unknown> = { provider: 'demo' }) {
  const created = await api(playground.url, 'POST', '/api/sessions', body)
  expect(created.status).toBe(201)
  return created.body.session.id as string
}

function ofType(reply: StreamReply, type: string): ServerEvent[] {
  return reply.events.filter((event) => event.event === type)
}

/** The pending calls of a reply's `input-required` event. */
function pendingOf(reply: StreamReply): Array<Record<string, unknown> & { toolUseId: string }> {
  const event = ofType(reply, 'input-required')[0]
  expect(event).toBeDefined()
  return (event!.data as { pending: Array<Record<string, unknown> & { toolUseId: string }> }).pending
}

/** Every stream of the tour ends with `done` (or `error`) and then `end`. */
function expectEnd(reply: StreamReply, last: 'done' | 'error' = 'done'): void {
  expect(reply.status).toBe(200)
  expect(reply.events.map((event) => event.event).slice(-2)).toEqual([last, 'end'])
}

beforeEach(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'agentx-playground-r2-'))
  workspaces.push(workspace)
})

afterEach(async () => {
  await Promise.all(running.splice(0).map((playground) => playground.close()))
})

afterAll(async () => {
  await Promise.all(workspaces.map((folder) => rm(folder, { recursive: true, force: true })))
})

describe('the demo provider’s tour commands', () => {
  it('/approve waits for an approval (pending in GET), then runs the tool once approved', async () => {
    const playground = await start()
    const id = await createSession(playground)
    const asked = await sendMessage(playground.url, id, '/approve')
    expectEnd(asked)
    const required = { pending: pendingOf(asked) }
    expect(required.pending).toEqual([
      {
        toolUseId: expect.any(String),
        name: 'deploy_service',
        input: { service: 'web', environment: 'production' },
        kind: 'approval',
        sessionId: id,
      },
    ])
    const detail = await api(playground.url, 'GET', `/api/sessions/${id}`)
    expect(detail.body.session.state).toBe('waiting_input')
    expect(detail.body.pending).toEqual(required.pending)
    const toolUseId = required.pending[0]!.toolUseId as string
    // A wrong id writes nothing.
    const wrong = await sendMessage(playground.url, id, [
      { type: 'tool_approval', toolUseId: 'nope', approved: true },
    ])
    expect(wrong.status).toBe(400)
    const approved = await sendMessage(playground.url, id, [
      {
        type: 'tool_approval',
        toolUseId,
        approved: true,
        input: { service: 'api', environment: 'production' },
      },
    ])
    expectEnd(approved)
    expect(ofType(approved, 'tool-result')[0]?.data).toMatchObject({ toolUseId })
    expect(deltaText(approved.events)).toContain('Deployed **api** to **production**')
    const stored = await playground.persister.getMessages(id)
    expect(stored.map((message) => message.type)).toEqual(['user', 'agent', 'tool', 'agent'])
    expect((await api(playground.url, 'GET', `/api/sessions/${id}`)).body.pending).toEqual([])
  })

  it('/approve denied with a reason: the tool does not run and the model is told why', async () => {
    const playground = await start()
    const id = await createSession(playground)
    const asked = await sendMessage(playground.url, id, '/approve')
    const toolUseId = pendingOf(asked)[0]!.toolUseId
    const denied = await sendMessage(playground.url, id, [
      { type: 'tool_approval', toolUseId, approved: false, reason: 'not on a Friday' },
    ])
    expectEnd(denied)
    const result = ofType(denied, 'tool-result')[0]?.data as { isError?: boolean; content: unknown }
    expect(result.isError).toBe(true)
    expect(JSON.stringify(result.content)).toContain('not on a Friday')
    expect(deltaText(denied.events)).toContain('did not happen')
  })

  it('/ask asks the user through a client tool; the answer is its result', async () => {
    const playground = await start()
    const id = await createSession(playground)
    const asked = await sendMessage(playground.url, id, '/ask')
    expectEnd(asked)
    const pending = pendingOf(asked)
    expect(pending).toMatchObject([
      { name: 'ask_user', kind: 'client', input: { question: expect.any(String) } },
    ])
    const answered = await sendMessage(playground.url, id, [
      { type: 'tool_result', toolUseId: pending[0]!.toolUseId, content: 'Lisbon' },
    ])
    expectEnd(answered)
    expect(deltaText(answered.events)).toContain('You answered “Lisbon”')
  })

  it('/handoff hands the conversation to the billing profile, which answers the next send too', async () => {
    const playground = await start()
    const id = await createSession(playground)
    const reply = await sendMessage(playground.url, id, '/handoff')
    expectEnd(reply)
    expect(ofType(reply, 'handoff').map((event) => event.data)).toEqual([
      { type: 'handoff', from: 'default', to: 'billing' },
    ])
    expect(ofType(reply, 'step-start').map((event) => event.data.agent)).toEqual(['default', 'billing'])
    const next = await sendMessage(playground.url, id, 'when is my next invoice?')
    expect(deltaText(next.events)).toContain('Billing agent here')
    const detail = await api(playground.url, 'GET', `/api/sessions/${id}`)
    expect(detail.body.session.activeAgent).toBe('billing')
    expect(
      detail.body.messages
        .filter((message: AnyMessage) => message.type === 'agent')
        .map((message: AnyMessage) => message.agentName),
    ).toEqual(['default', 'billing', 'billing'])
    // A send may pick the profile: back to the default one.
    const picked = await sendMessage(playground.url, id, 'hello', undefined, { agent: 'default' })
    expect(ofType(picked, 'step-start')[0]?.data.agent).toBe('default')
    const unknown = await sendMessage(playground.url, id, 'hello', undefined, { agent: 'nobody' })
    expect(unknown.status).toBe(400)
    expect(unknown.body).toMatchObject({ error: { code: 'VALIDATION' } })
  })

  it('/delegate runs the researcher in a child session: subagent events, a readable read-only child, left out of the list', async () => {
    const playground = await start()
    const id = await createSession(playground)
    const reply = await sendMessage(playground.url, id, '/delegate')
    expectEnd(reply)
    const subagent = ofType(reply, 'subagent')
    expect(subagent.length).toBeGreaterThan(3)
    const childId = subagent[0]?.data.sessionId as string
    const call = ofType(reply, 'tool-call')[0]?.data as { id: string; name: string }
    expect(call.name).toBe('researcher')
    expect(childId).toBe(`${id}/${call.id}`)
    expect(subagent.every((event) => event.data.agent === 'researcher')).toBe(true)
    const childText = subagent
      .map((event) => event.data.event as { type: string; text?: string })
      .filter((event) => event.type === 'text-delta')
      .map((event) => event.text)
      .join('')
    expect(childText).toContain('Findings on')
    // The child's deltas are not repeated as the parent's own: none of the parent's while the child runs.
    const firstChild = reply.events.findIndex((event) => event.event === 'subagent')
    const lastChild = reply.events.findLastIndex((event) => event.event === 'subagent')
    expect(reply.events.slice(firstChild, lastChild).filter((event) => event.event === 'text-delta')).toEqual(
      [],
    )
    expect(deltaText(reply.events)).toContain('The researcher sub-agent reports')
    const child = await api(playground.url, 'GET', `/api/sessions/${encodeURIComponent(childId)}`)
    expect(child.status).toBe(200)
    expect(child.body.session).toMatchObject({
      parentSessionId: id,
      parentToolUseId: call.id,
      canSend: false,
    })
    expect(child.body.messages.map((message: AnyMessage) => message.type)).toEqual(['user', 'agent'])
    const refused = await sendMessage(playground.url, childId, 'hi')
    expect(refused.status).toBe(400)
    const list = await api(playground.url, 'GET', '/api/sessions')
    expect(list.body.sessions.map((session: { id: string }) => session.id)).toEqual([id])
  })

  it('/long, /json, /compact and /tool each end with done; /error ends with error, and retry succeeds', async () => {
    const playground = await start()
    const id = await createSession(playground)
    const long = await sendMessage(playground.url, id, '/long')
    expectEnd(long)
    expect(deltaText(long.events).length).toBeGreaterThan(500)
    const json = await sendMessage(playground.url, id, '/json')
    expectEnd(json)
    expect(JSON.parse(deltaText(json.events))).toEqual(DEMO_JSON_OUTPUT)
    const compact = await sendMessage(playground.url, id, '/compact')
    expectEnd(compact)
    expect(ofType(compact, 'step-finish')[0]?.data).toMatchObject({
      usage: { inputTokens: DEMO_COMPACT_INPUT_TOKENS },
    })
    const tool = await sendMessage(playground.url, id, '/tool')
    expectEnd(tool)
    expect(ofType(tool, 'tool-call')[0]?.data.name).toBe('get_time')
    const failed = await sendMessage(playground.url, id, '/error')
    expectEnd(failed, 'error')
    const retried = await retrySend(playground.url, id)
    expectEnd(retried)
    expect(ofType(retried, 'step-start')).toHaveLength(1)
  })
})

describe('Release 2 API', () => {
  it('/compact fills the context: its next model request is preceded by a compaction summary, stored as a system message', async () => {
    const playground = await start()
    const id = await createSession(playground)
    for (const text of ['hello', 'what is 2 + 3?']) expectEnd(await sendMessage(playground.url, id, text))
    // /compact reports 150,000 input tokens, then calls a tool: the request after the tool result compacts.
    const compact = await sendMessage(playground.url, id, '/compact')
    expectEnd(compact)
    const compaction = ofType(compact, 'compaction')[0]?.data as { message: AnyMessage } | undefined
    expect(compaction?.message).toMatchObject({
      type: 'system',
      compaction: { throughSeq: expect.any(Number) },
    })
    const types = compact.events.map((event) => event.event)
    expect(types.indexOf('compaction')).toBeLessThan(types.lastIndexOf('step-start'))
    const stored = await playground.persister.getMessages(id)
    expect(stored.filter((message) => message.compaction !== undefined)).toHaveLength(1)
    // Nothing is deleted: the three user messages are all still there.
    expect(stored.filter((message) => message.type === 'user').map((message) => message.content)).toEqual([
      'hello',
      'what is 2 + 3?',
      '/compact',
    ])
  })

  it('structured output: a send with an output schema answers with result.output; output that does not match fails with OUTPUT_INVALID', async () => {
    const playground = await start()
    const id = await createSession(playground)
    const providers = await api(playground.url, 'GET', '/api/providers')
    expect(providers.body.outputExample).toEqual(DEMO_OUTPUT)

    const json = await sendMessage(playground.url, id, '/json', undefined, { output: DEMO_OUTPUT })
    expectEnd(json)
    const done = ofType(json, 'done')[0]?.data as { result: { output: unknown; text: string } }
    expect(done.result.output).toEqual(DEMO_JSON_OUTPUT)
    expect(JSON.parse(done.result.text)).toEqual(DEMO_JSON_OUTPUT)

    // Any schema: the demo fills it in, the kernel parses and checks it.
    const schema = {
      type: 'object',
      properties: {
        title: { type: 'string', examples: ['A day in Lyon'] },
        stars: { type: 'integer', minimum: 1, maximum: 5 },
        tags: { type: 'array', items: { type: 'string', enum: ['food', 'museums'] }, minItems: 2 },
      },
      required: ['title', 'stars', 'tags'],
    }
    const custom = await sendMessage(playground.url, id, 'rate my trip', undefined, {
      output: { name: 'trip_rating', schema },
    })
    expectEnd(custom)
    expect((ofType(custom, 'done')[0]!.data as { result: { output: unknown } }).result.output).toEqual({
      title: 'A day in Lyon',
      stars: 1,
      tags: ['food', 'food'],
    })

    const broken = await sendMessage(playground.url, id, '/json broken', undefined, { output: DEMO_OUTPUT })
    expectEnd(broken, 'error')
    expect(ofType(broken, 'error')[0]?.data.error).toMatchObject({
      code: 'OUTPUT_INVALID',
      message: expect.stringContaining('temperatureC: required'),
    })
    const detail = await api(playground.url, 'GET', `/api/sessions/${id}`)
    expect(detail.body.session.state).toBe('error')
    expect(detail.body.lastError).toMatchObject({ code: 'OUTPUT_INVALID' })
    // The reply that did not match stays stored, as the kernel promises.
    const last = detail.body.messages.at(-1) as AnyMessage
    expect(last.type).toBe('agent')
    expect(JSON.parse((last.content as Array<{ text: string }>)[0]!.text)).toEqual({ city: 'Paris' })

    // A malformed output option is refused before anything is stored.
    const before = (await playground.persister.getMessages(id)).length
    for (const output of [
      { schema: 'object' },
      { schema: {}, name: 'bad name!' },
      { schema: {}, extra: 1 },
      [],
    ]) {
      const refused = await sendMessage(playground.url, id, 'hello', undefined, { output })
      expect(refused).toMatchObject({ status: 400, body: { error: { code: 'VALIDATION' } } })
    }
    expect(await playground.persister.getMessages(id)).toHaveLength(before)
  })

  it('passes per-send model, temperature and max tokens to the adapter, and refuses bad values writing nothing', async () => {
    const openai = new ScriptedAdapter(
      [[{ type: 'message', content: [{ type: 'text', text: 'ok' }], stopReason: 'end_turn' }]],
      { name: 'openai' },
    )
    const playground = await start({
      env: { OPENAI_API_KEY: 'sk-test-options' },
      importModule: async () => ({ createOpenAIAdapter: () => openai }),
    })
    const id = await createSession(playground, { provider: 'openai', model: 'gpt-a' })
    const reply = await sendMessage(playground.url, id, 'hi', undefined, {
      model: 'gpt-b',
      temperature: 0.3,
      maxOutputTokens: 64,
    })
    expectEnd(reply)
    expect(openai.calls[0]?.options).toMatchObject({ model: 'gpt-b', temperature: 0.3, maxOutputTokens: 64 })
    for (const bad of [
      { temperature: 3 },
      { maxOutputTokens: 0 },
      { model: '' },
      { colour: 'red' },
      { agent: 7 },
    ]) {
      const refused = await sendMessage(playground.url, id, 'hi', undefined, bad)
      expect(refused.status).toBe(400)
    }
    expect(await playground.persister.getMessages(id)).toHaveLength(2)
  })

  it('filters the session list by text (q) and state', async () => {
    const playground = await start()
    const tea = await createSession(playground)
    await sendMessage(playground.url, tea, 'A question about Tea')
    const failed = await createSession(playground)
    await sendMessage(playground.url, failed, '/error')
    const empty = await createSession(playground)
    const ids = (path: string) =>
      api(playground.url, 'GET', path).then((answer) =>
        answer.body.sessions.map((session: { id: string }) => session.id),
      )
    expect(await ids('/api/sessions?q=tea')).toEqual([tea])
    expect(await ids('/api/sessions?q=TEA&state=idle')).toEqual([tea])
    expect(await ids('/api/sessions?q=tea&state=error')).toEqual([])
    expect(await ids('/api/sessions?state=error')).toEqual([failed])
    expect((await ids('/api/sessions?state=created,error')).sort()).toEqual([failed, empty].sort())
    expect(await ids(`/api/sessions?q=${encodeURIComponent(empty)}`)).toEqual([empty])
    expect((await api(playground.url, 'GET', '/api/sessions?state=sleeping')).status).toBe(400)
  })

  it('exports a session and all its messages as a JSON download', async () => {
    const playground = await start()
    const id = await createSession(playground)
    await sendMessage(playground.url, id, 'What is 12 * (3 + 4)?')
    const response = await fetch(`${playground.url}/api/sessions/${id}/export`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-disposition')).toMatch(
      /^attachment; filename="agentx-session-.+\.json"$/,
    )
    const exported = (await response.json()) as { session: { id: string }; messages: AnyMessage[] }
    expect(exported.session).toMatchObject({
      id,
      appName: 'agentx-playground',
      metadata: { provider: 'demo' },
    })
    expect(exported.messages).toEqual(JSON.parse(JSON.stringify(await playground.persister.getMessages(id))))
    expect((await api(playground.url, 'GET', '/api/sessions/nope/export')).status).toBe(404)
  })

  it('forks a session through a message with session.fork(): copies stored, the source untouched, sends go on in the fork', async () => {
    const playground = await start()
    const id = await createSession(playground, { provider: 'demo', systemPrompt: 'Be brief.' })
    await sendMessage(playground.url, id, 'first question')
    await sendMessage(playground.url, id, 'second question')
    const source = await playground.persister.getMessages(id)
    expect(source.map((message) => message.seq)).toEqual([0, 1, 2, 3])

    const forked = await api(playground.url, 'POST', `/api/sessions/${id}/fork`, { throughSeq: 1 })
    expect(forked.status).toBe(201)
    const forkId = forked.body.session.id as string
    expect(forkId).not.toBe(id)
    expect(forked.body.session).toMatchObject({
      forkedFrom: { sessionId: id, seq: 1 },
      provider: 'demo',
      systemPrompt: 'Be brief.',
      state: 'idle',
      canSend: true,
    })
    // Copies with new ids and the same seqs, in the store; the source keeps all four messages.
    const copies = await playground.persister.getMessages(forkId)
    expect(copies.map((message) => [message.seq, message.type])).toEqual([
      [0, 'user'],
      [1, 'agent'],
    ])
    expect(copies.map((message) => message.content)).toEqual(
      source.slice(0, 2).map((message) => message.content),
    )
    expect(copies.some((message) => source.some((original) => original.id === message.id))).toBe(false)
    expect(await playground.persister.getMessages(id)).toHaveLength(4)
    expect((await playground.persister.getSession(forkId))?.metadata).toMatchObject({ provider: 'demo' })

    // The fork is listed, and a send continues it (the edited question of edit-and-resend).
    const list = await api(playground.url, 'GET', '/api/sessions')
    expect(list.body.sessions.map((session: { id: string }) => session.id).sort()).toEqual(
      [id, forkId].sort(),
    )
    expectEnd(await sendMessage(playground.url, forkId, 'another second question'))
    const continued = await api(playground.url, 'GET', `/api/sessions/${forkId}`)
    expect(continued.body.messages.map((message: AnyMessage) => message.seq)).toEqual([0, 1, 2, 3])
    expect(continued.body.messages[2].content).toBe('another second question')

    // Without throughSeq: the whole conversation.
    const whole = await api(playground.url, 'POST', `/api/sessions/${id}/fork`, {})
    expect(whole.status).toBe(201)
    expect(whole.body.session.forkedFrom).toEqual({ sessionId: id, seq: 3 })
    expect(await playground.persister.getMessages(whole.body.session.id)).toHaveLength(4)
  })

  it('refuses forks it cannot make, writing nothing: bad or unknown seq, empty, busy, child or missing session', async () => {
    const playground = await start({ demoDelayMs: 15 })
    const id = await createSession(playground)
    const empty = await createSession(playground)
    await sendMessage(playground.url, id, 'hello')
    const fork = (sessionId: string, body: unknown) =>
      api(playground.url, 'POST', `/api/sessions/${encodeURIComponent(sessionId)}/fork`, body)
    expect(await fork(id, { throughSeq: -1 })).toMatchObject({
      status: 400,
      body: { error: { code: 'VALIDATION' } },
    })
    expect(await fork(id, { throughSeq: 1.5 })).toMatchObject({ status: 400 })
    expect(await fork(id, { throughSeq: 99 })).toMatchObject({
      status: 400,
      body: { error: { code: 'VALIDATION' } },
    })
    expect(await fork(empty, {})).toMatchObject({ status: 409, body: { error: { code: 'SESSION_STATE' } } })
    expect((await fork('nope', {})).status).toBe(404)
    const delegated = await sendMessage(playground.url, id, '/delegate')
    const childId = ofType(delegated, 'subagent')[0]?.data.sessionId as string
    expect(await fork(childId, {})).toMatchObject({ status: 400, body: { error: { code: 'VALIDATION' } } })
    // While a reply runs.
    const long = fetch(`${playground.url}/api/sessions/${id}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: '/long' }),
    })
    const response = await long
    const reader = response.body!.getReader()
    await reader.read()
    expect(await fork(id, {})).toMatchObject({ status: 409, body: { error: { code: 'SESSION_BUSY' } } })
    await api(playground.url, 'POST', `/api/sessions/${id}/abort`)
    while (!(await reader.read()).done) {}
    expect(
      (await playground.persister.listSessions({ includeChildren: true }))
        .map((session) => session.id)
        .sort(),
    ).toEqual([id, empty, childId].sort())
  })

  it('a fork of a failed session keeps its error (and retry works there) only when it copies the whole conversation', async () => {
    const playground = await start()
    const id = await createSession(playground)
    await sendMessage(playground.url, id, 'hello')
    expectEnd(await sendMessage(playground.url, id, '/error'), 'error')
    const failed = await api(playground.url, 'GET', `/api/sessions/${id}`)
    expect(failed.body.lastError).toMatchObject({ kind: 'rate_limit' })

    const whole = await api(playground.url, 'POST', `/api/sessions/${id}/fork`, {})
    expect(whole.body.session).toMatchObject({ state: 'error', lastError: { kind: 'rate_limit' } })
    const wholeId = whole.body.session.id as string
    expectEnd(await retrySend(playground.url, wholeId))
    expect((await api(playground.url, 'GET', `/api/sessions/${wholeId}`)).body.session.state).toBe('idle')

    const early = await api(playground.url, 'POST', `/api/sessions/${id}/fork`, { throughSeq: 1 })
    expect(early.body.session.state).toBe('idle')
    expect(early.body.session.lastError).toBeUndefined()
    const stored = await playground.persister.getSession(early.body.session.id)
    expect(stored?.metadata).toEqual({ provider: 'demo' })
    // Renaming the failed session keeps the error that explains it.
    await api(playground.url, 'PATCH', `/api/sessions/${id}`, { summary: 'Failed one' })
    expect((await api(playground.url, 'GET', `/api/sessions/${id}`)).body).toMatchObject({
      session: { summary: 'Failed one', state: 'error' },
      lastError: { kind: 'rate_limit' },
    })
  })

  it('renames a session with session.update(), keeping the playground’s own metadata', async () => {
    const playground = await start()
    const id = await createSession(playground)
    await sendMessage(playground.url, id, 'hello')
    const renamed = await api(playground.url, 'PATCH', `/api/sessions/${id}`, { summary: 'Renamed' })
    expect(renamed).toMatchObject({ status: 200, body: { session: { id, summary: 'Renamed' } } })
    expect((await playground.persister.getSession(id))?.summary).toBe('Renamed')
    // A later send does not overwrite a chosen name.
    await sendMessage(playground.url, id, 'more')
    expect((await api(playground.url, 'GET', '/api/sessions?q=renamed')).body.sessions).toHaveLength(1)
    const tagged = await api(playground.url, 'PATCH', `/api/sessions/${id}`, {
      metadata: { topic: 'tests', provider: 'someone-else' },
    })
    expect(tagged.status).toBe(200)
    expect((await playground.persister.getSession(id))?.metadata).toEqual({
      topic: 'tests',
      provider: 'demo',
    })
    expect((await api(playground.url, 'PATCH', `/api/sessions/${id}`, { summary: 42 })).status).toBe(400)
    expect(
      (await api(playground.url, 'PATCH', `/api/sessions/${id}`, { summary: 'x'.repeat(201) })).status,
    ).toBe(400)
    expect((await api(playground.url, 'PATCH', `/api/sessions/${id}`, { metadata: [] })).status).toBe(400)
    expect((await api(playground.url, 'PATCH', '/api/sessions/nope', { summary: 'x' })).status).toBe(404)
    expect((await playground.persister.getSession(id))?.summary).toBe('Renamed')
  })

  it('admits the extra Host names of ALLOWED_HOSTS, and only those', async () => {
    const playground = await start({ env: { ALLOWED_HOSTS: 'tunnel.example, fwd.example:7000' } })
    const get = (host: string, origin?: string) =>
      rawRequest(playground.port, {
        path: '/api/sessions',
        headers: { host, ...(origin === undefined ? {} : { origin }) },
      })
    expect((await get('tunnel.example:8443')).status).toBe(200)
    expect((await get('tunnel.example:8443', 'http://tunnel.example:8443')).status).toBe(200)
    expect((await get('fwd.example:7000')).status).toBe(200)
    expect((await get('fwd.example:7001')).status).toBe(403)
    expect((await get('evil.example:8443')).status).toBe(403)
    expect((await get(`127.0.0.1:${playground.port}`, 'http://tunnel.example.evil:1')).status).toBe(403)
    // A forward that ends TLS: the browser sends an https Origin for it (before: 403 on every POST).
    expect((await get('tunnel.example', 'https://tunnel.example')).status).toBe(200)
    const created = await rawRequest(playground.port, {
      method: 'POST',
      path: '/api/sessions',
      headers: {
        host: 'tunnel.example',
        origin: 'https://tunnel.example',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ provider: 'demo' }),
    })
    expect(created.status).toBe(201)
    // Not for the server's own address, which is plain http.
    expect((await get(`127.0.0.1:${playground.port}`, `https://127.0.0.1:${playground.port}`)).status).toBe(
      403,
    )
  })

  it('answers an unparsable request target with 400 and a UTF-16 body with 415, not 500', async () => {
    const playground = await start()
    const host = `127.0.0.1:${playground.port}`
    const broken = await rawRequest(playground.port, { path: 'http://[', headers: { host } })
    expect(broken.status).toBe(400)
    expect(JSON.parse(broken.body)).toMatchObject({ error: { code: 'BAD_REQUEST' } })
    const utf16 = Buffer.from(JSON.stringify({ provider: 'demo' }), 'utf16le')
    const refused = await fetch(`${playground.url}/api/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-16' },
      body: utf16,
    })
    expect(refused.status).toBe(415)
    expect(await playground.persister.listSessions({})).toEqual([])
    const explicit = await fetch(`${playground.url}/api/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=UTF-8' },
      body: JSON.stringify({ provider: 'demo' }),
    })
    expect(explicit.status).toBe(201)
  })

  it('deletes a session while its reply runs: the reply stops, nothing of it remains', async () => {
    const playground = await start({ demoDelayMs: 15 })
    const id = await createSession(playground)
    let deleted: number | undefined
    const reply = await sendMessage(playground.url, id, 'tell me a long story', async (event) => {
      if (event.event === 'text-delta' && deleted === undefined) {
        deleted = (await api(playground.url, 'DELETE', `/api/sessions/${id}`)).status
      }
    })
    expect(deleted).toBe(204)
    expect(reply.events.at(-1)?.event).toBe('end')
    expect(await playground.persister.getSession(id)).toBeNull()
    expect(await playground.persister.getMessages(id)).toEqual([])
  })
})
