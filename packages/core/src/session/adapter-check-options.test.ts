// A send option the adapter refuses (AgentAdapter.checkOptions) rejects the send before anything is
// stored or sent, and leaves the session as it was (DESIGN §3: one bad call never poisons a session).
import { describe, expect, it } from 'vitest'
import type { AdapterStreamOptions, AgentAdapter } from '../contracts/agent-adapter.js'
import type { ContentBlock } from '../contracts/messages.js'
import { createAgent } from '../agent/create-agent.js'
import { ValidationError } from '../errors/validation-error.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn } from '../testing/stream-helpers.js'

/** A scripted adapter that refuses `providerOptions.test.reserved`, as a real adapter refuses its own fields. */
class StrictAdapter extends ScriptedAdapter {
  checked: AdapterStreamOptions[] = []
  throwPlain = false
  checkOptions(options: AdapterStreamOptions): void {
    this.checked.push(options)
    const own = options.providerOptions?.test as Record<string, unknown> | undefined
    if (own?.reserved !== undefined) {
      if (this.throwPlain) throw new TypeError('reserved is not allowed')
      throw new ValidationError('providerOptions.test.reserved belongs to the adapter.')
    }
  }
}

describe('AgentAdapter.checkOptions', () => {
  it('a refused option rejects with ValidationError, stores nothing, calls no model, and the next send is clean', async () => {
    const persister = new InMemoryPersister()
    const adapter = new StrictAdapter([textTurn('fine')])
    const agent = createAgent({ systemPrompt: 'be brief' }, { adapter, persister })
    const session = await agent.createSession({ model: 'm1' })
    const events: string[] = []
    session.subscribe((event) => events.push(event.type))
    await expect(
      session.send('refused text', { providerOptions: { test: { reserved: 1 } } }),
    ).rejects.toBeInstanceOf(ValidationError)
    expect(adapter.calls).toHaveLength(0)
    expect(session.state).toBe('created')
    expect(events).toEqual([])
    expect(await persister.getMessages(session.id)).toEqual([])
    // What the adapter was asked about: the send's options, without history, signal or resume.
    expect(adapter.checked[0]).toMatchObject({ model: 'm1', systemPrompt: 'be brief', history: [] })
    expect(adapter.checked[0]).not.toHaveProperty('signal')

    const result = await session.send('good text')
    expect(result.text).toBe('fine')
    expect(adapter.calls).toHaveLength(1)
    expect(adapter.calls[0]!.options.history).toEqual([])
    expect(adapter.calls[0]!.prompt as string | ContentBlock[]).toBe('good text')
    await session.flush()
    expect((await persister.getMessages(session.id)).map((m) => m.type)).toEqual(['user', 'agent'])
    await agent.close()
  })

  it('a plain error from checkOptions becomes a ValidationError with it as the cause', async () => {
    const adapter = new StrictAdapter([])
    adapter.throwPlain = true
    const agent = createAgent({}, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    const error = await session
      .send('x', { providerOptions: { test: { reserved: 1 } } })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ValidationError)
    expect((error as ValidationError).cause).toBeInstanceOf(TypeError)
    expect(session.state).toBe('created')
    await agent.close()
  })

  it('retry() checks the options too, and an adapter without checkOptions is not asked', async () => {
    const adapter = new StrictAdapter([{ events: [], error: new Error('boom') }, textTurn('again')])
    const agent = createAgent({ retry: { maxRetries: 0 } }, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    await expect(session.send('hi')).rejects.toBeDefined()
    expect(session.state).toBe('error')
    await expect(session.retry({ providerOptions: { test: { reserved: 1 } } })).rejects.toBeInstanceOf(
      ValidationError,
    )
    expect(session.state).toBe('error')
    expect((await session.retry()).text).toBe('again')

    const plain: AgentAdapter = new ScriptedAdapter([textTurn('ok')])
    const other = createAgent({}, { adapter: plain, persister: new InMemoryPersister() })
    const s = await other.createSession()
    expect((await s.send('x', { providerOptions: { test: { reserved: 1 } } })).text).toBe('ok')
    await agent.close()
    await other.close()
  })
})
