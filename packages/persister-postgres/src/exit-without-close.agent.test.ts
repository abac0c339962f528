// A script that closes its agent but not the PostgreSQL persister it created and handed to it
// (the application owns a persister given in `deps`) must still exit once its writes are stored:
// idle pooled connections and the idle write connection do not keep the process alive, and a
// statement in flight does.
import { describe, expect, it } from 'vitest'
import { createPostgresPersister } from './index.js'
import { nextLine, startChild } from '../test/child-process.js'
import { freshSchema, TEST_DATABASE_URL } from '../test/test-database.js'

describe('a process that never closes its persister', () => {
  it('exits by itself after agent.close(), with its last unawaited writes stored', async () => {
    const schema = freshSchema()
    const count = 5
    const child = startChild('./agent-worker.mjs', ['no-close', TEST_DATABASE_URL, schema, String(count)])
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
    const line = await nextLine<{ sent: number; sessionId: string }>(child)
    expect(line.sent).toBe(count)
    // Before the fix the idle connections kept the process alive for good.
    let timer: ReturnType<typeof setTimeout> | undefined
    const code = await Promise.race([
      exited,
      new Promise<'still running'>((resolve) => {
        timer = setTimeout(() => resolve('still running'), 20_000)
      }),
    ])
    clearTimeout(timer)
    if (code === 'still running') child.kill('SIGKILL')
    expect(code).toBe(0)
    const persister = createPostgresPersister({ connectionString: TEST_DATABASE_URL, schema })
    try {
      const stored = await persister.getMessages(line.sessionId)
      expect(stored.map((m) => m.seq)).toEqual([...Array(3 * count).keys()])
      expect(stored.slice(2 * count).map((m) => m.content)).toEqual(
        [...Array(count).keys()].map((i) => `late ${i}`),
      )
    } finally {
      await persister.close()
    }
  }, 60_000)
})
