import { describe, expect, it } from 'vitest'
import { createAgent } from '../agent/create-agent.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn } from '../testing/stream-helpers.js'
import type { Logger } from './logger.js'
import { thrownText } from './thrown-text.js'

describe('thrownText', () => {
  it('is a string for whatever was thrown, and never throws itself', () => {
    expect(thrownText(new Error('boom'))).toBe('boom')
    expect(thrownText(new TypeError(''))).toBe('TypeError')
    expect(thrownText(Object.assign(new Error('x'), { message: { code: 'E42' } }))).toBe('{"code":"E42"}')
    expect(thrownText('plain')).toBe('plain')
    expect(thrownText(undefined)).toBe('undefined')
    expect(thrownText(42)).toBe('42')
    expect(thrownText(Object.create(null))).toBe('{}')
    const cycle: Record<string, unknown> = Object.create(null)
    cycle.self = cycle
    expect(thrownText(cycle)).toBe('a value that cannot be shown as text')
  })

  it('a session listener that throws Object.create(null) is logged, and the send goes on', async () => {
    const warnings: Array<[string, unknown]> = []
    const logger: Logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: (message, fields) => warnings.push([message, fields]),
      error: () => undefined,
    }
    const agent = createAgent(
      {},
      { adapter: new ScriptedAdapter([textTurn('Hi.')]), persister: new InMemoryPersister(), logger },
    )
    const session = await agent.createSession()
    session.subscribe(() => {
      throw Object.create(null)
    })
    expect((await session.send('Hello')).text).toBe('Hi.')
    expect(warnings[0]).toEqual(['agentx: a session listener threw', { sessionId: session.id, error: '{}' }])
    await agent.close()
  })
})
