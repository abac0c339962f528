// session.update() (DESIGN §10.2): persisted, validated, safe while a send runs.
import type { AgentAdapter } from '../contracts/agent-adapter.js'
import { describe, expect, it } from 'vitest'
import { createAgent } from '../agent/create-agent.js'
import { isAgentError } from '../errors/agent-error.js'
import { SessionBusyError } from '../errors/session-busy-error.js'
import { SessionStateError } from '../errors/session-state-error.js'
import { ValidationError } from '../errors/validation-error.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { ScriptedAdapter, type ScriptedTurn } from '../testing/scripted-adapter.js'
import { textTurn } from '../testing/stream-helpers.js'
import type { SessionEvent } from './session-events.js'

async function setup(turns: ScriptedTurn[] = [{ events: textTurn('one') }, { events: textTurn('two') }]) {
  const persister = new InMemoryPersister()
  const adapter = new ScriptedAdapter(turns)
  const agent = createAgent({ model: 'model-a', systemPrompt: 'Be brief.' }, { adapter, persister })
  const session = await agent.createSession({ summary: 'Old', metadata: { topic: 'travel', stars: 3 } })
  return { persister, adapter, agent, session }
}

describe('session.update()', () => {
  it('persists summary, metadata, systemPrompt and model, and resolves once stored', async () => {
    const { persister, session } = await setup()
    await session.update({
      summary: 'Trip to Rome',
      metadata: { topic: 'rome' },
      systemPrompt: 'Answer in Italian.',
      model: 'model-b',
    })
    const stored = (await persister.getSession(session.id))!
    expect(stored.summary).toBe('Trip to Rome')
    // Metadata is replaced as a whole: `stars` is gone.
    expect(stored.metadata).toEqual({ topic: 'rome' })
    expect(stored.systemPrompt).toBe('Answer in Italian.')
    expect(stored.model).toBe('model-b')
    expect(session.summary).toBe('Trip to Rome')
    expect(session.model).toBe('model-b')
    expect(session.metadata).toEqual({ topic: 'rome' })
  })

  it('leaves fields it is not given as they are, and does not count as activity', async () => {
    const { persister, session } = await setup()
    const before = (await persister.getSession(session.id))!
    await new Promise((resolve) => setTimeout(resolve, 5))
    await session.update({ summary: 'Renamed' })
    const stored = (await persister.getSession(session.id))!
    expect(stored).toEqual({ ...before, summary: 'Renamed' })
  })

  it('the next send uses the new model and system prompt', async () => {
    const { adapter, session } = await setup()
    await session.send('hi')
    await session.update({ model: 'model-b', systemPrompt: 'Be verbose.' })
    await session.send('again')
    expect(adapter.calls.map((call) => [call.options.model, call.options.systemPrompt])).toEqual([
      ['model-a', 'Be brief.'],
      ['model-b', 'Be verbose.'],
    ])
  })

  it('survives a restart', async () => {
    const { persister, session } = await setup()
    await session.update({ summary: 'Kept', model: 'model-b' })
    const restarted = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    const reloaded = (await restarted.getSession(session.id))!
    expect(reloaded.summary).toBe('Kept')
    expect(reloaded.model).toBe('model-b')
  })

  it('rejects invalid input with ValidationError and writes nothing', async () => {
    const { persister, session } = await setup()
    const before = await persister.getSession(session.id)
    for (const update of [
      undefined,
      null,
      'title',
      { summary: 5 },
      { model: '' },
      { model: 7 },
      { systemPrompt: false },
      { metadata: 'x' },
      { metadata: [1] },
      { metadata: { n: Number.NaN } },
      { title: 'x' },
      { summary: 'ok', state: 'idle' },
    ]) {
      const error = await session.update(update as never).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(ValidationError)
    }
    expect(await persister.getSession(session.id)).toEqual(before)
    expect(session.summary).toBe('Old')
  })

  it('an unknown field names the closest known one', async () => {
    const { session } = await setup()
    await expect(session.update({ sumary: 'x' } as never)).rejects.toThrow(/did you mean 'summary'/)
    await expect((session.update as () => Promise<void>)()).rejects.toThrow(
      "update needs an object such as { summary: 'Trip to Rome' }, got nothing.",
    )
  })

  it('while a send runs: summary and metadata change (and the end of the send keeps them), model and systemPrompt reject with SessionBusyError', async () => {
    const { persister, adapter, session } = await setup([{ events: textTurn('slow'), delayMs: 60 }])
    const running = session.send('hello')
    await expect(session.update({ model: 'model-b' })).rejects.toBeInstanceOf(SessionBusyError)
    await expect(session.update({ systemPrompt: 'x' })).rejects.toBeInstanceOf(SessionBusyError)
    await session.update({ summary: 'Renamed mid-send', metadata: { pinned: true } })
    await running
    await session.flush()
    const stored = (await persister.getSession(session.id))!
    expect(stored.summary).toBe('Renamed mid-send')
    expect(stored.metadata).toEqual({ pinned: true })
    expect(stored.model).toBe('model-a')
    expect(stored.state).toBe('idle')
    expect(adapter.calls[0]!.options.model).toBe('model-a')
  })

  it('a deleted session rejects with SessionStateError; after close with AGENT_CLOSED', async () => {
    const { agent, session } = await setup()
    const other = await agent.createSession()
    await session.delete()
    await expect(session.update({ summary: 'x' })).rejects.toBeInstanceOf(SessionStateError)
    await agent.close()
    const error = await other.update({ summary: 'x' }).catch((caught: unknown) => caught)
    expect(isAgentError(error) && error.code).toBe('AGENT_CLOSED')
  })

  it('starts from what another process stored, so it does not write back an older state (with leases)', async () => {
    const persister = new InMemoryPersister()
    const first = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    const second = createAgent(
      { durability: 'sync' },
      { adapter: new ScriptedAdapter([textTurn('hi')]), persister },
    )
    const mine = await first.createSession()
    const theirs = (await second.getSession(mine.id))!
    await theirs.send('hello')
    await mine.update({ summary: 'Renamed' })
    const stored = (await persister.getSession(mine.id))!
    expect(stored.summary).toBe('Renamed')
    expect(stored.state).toBe('idle')
    expect(stored.lastActivity).toBe(theirs.lastActivity)
  })
})

describe('session.model', () => {
  function adapterWithDefault(calls: Array<string | undefined>): AgentAdapter {
    return {
      getName: () => 'defaulting',
      defaultModel: 'adapter-default',
      async *stream(_prompt, options) {
        calls.push(options.model)
        yield* textTurn('ok')
      },
    }
  }

  it("is the session's model, else the agent's, else the adapter's default model, never stored as one", async () => {
    const calls: Array<string | undefined> = []
    const persister = new InMemoryPersister()
    const agent = createAgent({}, { adapter: adapterWithDefault(calls), persister })
    const plain = await agent.createSession()
    expect(plain.model).toBe('adapter-default')
    const events: SessionEvent[] = []
    plain.subscribe((event) => events.push(event))
    await plain.send('hi')
    expect(events.find((event) => event.type === 'step-start')).toMatchObject({ model: 'adapter-default' })
    // The request still names no model: the adapter applies its own default.
    expect(calls).toEqual([''])
    expect((await persister.getSession(plain.id))?.model).toBeUndefined()
    const chosen = await agent.createSession({ model: 'chosen' })
    expect(chosen.model).toBe('chosen')
    await agent.close()

    const configured = createAgent({ model: 'configured' }, { adapter: adapterWithDefault([]), persister })
    expect((await configured.createSession()).model).toBe('configured')
    await configured.close()
  })

  it("is '' when nobody names a model and the adapter does not say", async () => {
    const agent = createAgent({}, { adapter: new ScriptedAdapter([]), persister: new InMemoryPersister() })
    expect((await agent.createSession()).model).toBe('')
    await agent.close()
  })
})
