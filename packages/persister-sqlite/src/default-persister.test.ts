import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAgent } from '@agentx/core'
import { ScriptedAdapter, textTurn } from '@agentx/core/testing'
import BetterSqlite3 from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'

const folder = mkdtempSync(join(tmpdir(), 'agentx-sqlite-default-'))
afterAll(() => rmSync(folder, { recursive: true, force: true }))

describe('the default persister of createAgent', () => {
  it('is this package at <workspace>/.agentx/data/agent.db when no deps.persister is given', async () => {
    const workspace = join(folder, 'project')
    const filename = join(workspace, '.agentx', 'data', 'agent.db')
    const agent = createAgent(
      { workspace, model: 'scripted-model' },
      { adapter: new ScriptedAdapter([textTurn('Hi there')]) },
    )
    expect(existsSync(join(workspace, '.agentx'))).toBe(false)

    await agent.initialize()
    const session = await agent.createSession({})
    const result = await session.send('Hello')
    await agent.close()

    expect(result.text).toBe('Hi there')
    expect(existsSync(filename)).toBe(true)
    const database = new BetterSqlite3(filename, { readonly: true })
    try {
      expect(database.prepare('select id from sessions').pluck().all()).toEqual([session.id])
      expect(
        database
          .prepare('select type, content from messages where session_id = ? order by seq')
          .all(session.id),
      ).toEqual([
        { type: 'user', content: JSON.stringify('Hello') },
        { type: 'agent', content: JSON.stringify([{ type: 'text', text: 'Hi there' }]) },
      ])
    } finally {
      database.close()
    }

    // A restarted process with the same workspace continues the conversation from the file.
    const restarted = createAgent(
      { workspace, model: 'scripted-model' },
      { adapter: new ScriptedAdapter([]) },
    )
    try {
      const reloaded = await restarted.getSession(session.id)
      expect(reloaded?.id).toBe(session.id)
      expect((await reloaded?.getMessages())?.map((message) => message.content)).toEqual([
        'Hello',
        [{ type: 'text', text: 'Hi there' }],
      ])
    } finally {
      await restarted.close()
    }
  })
})
