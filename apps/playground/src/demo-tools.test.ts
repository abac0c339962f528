import type { ToolContext } from '@agentx/core'
import { describe, expect, it } from 'vitest'
import { createDemoTools } from './demo-tools.js'

const context = {
  sessionId: 's',
  toolCallId: 't',
  signal: new AbortController().signal,
  messages: [],
} satisfies ToolContext

describe('createDemoTools', () => {
  const [getTime, calculator] = createDemoTools(() => new Date('2026-01-02T03:04:05.000Z'))

  it('get_time answers the injected clock in the asked time zone, UTC by default', async () => {
    expect(await getTime!.execute!({}, context)).toMatchObject({
      iso: '2026-01-02T03:04:05.000Z',
      timeZone: 'UTC',
    })
    const paris = (await getTime!.execute!({ timeZone: 'Europe/Paris' }, context)) as { local: string }
    expect(paris.local).toContain('04:04:05')
    expect(() => getTime!.execute!({ timeZone: 'Mars/Olympus' }, context)).toThrow(
      'Unknown time zone "Mars/Olympus"',
    )
  })

  it('calculator evaluates without eval and throws on bad input (a tool error, not a crash)', async () => {
    expect(await calculator!.execute!({ expression: '2 * (3 + 4)' }, context)).toEqual({
      expression: '2 * (3 + 4)',
      result: 14,
    })
    expect(() => calculator!.execute!({ expression: 'alert(1)' }, context)).toThrow('Unexpected')
    expect(() => calculator!.execute!({}, context)).toThrow('needs a string "expression"')
  })
})
