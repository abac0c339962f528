// The example's own tests, beyond the contract: the file format, atomic writes, foreign files,
// failed writes and use as an agent's persister. Run: `node --test`.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { createAgent, isAgentError } from '@agentx/core'
import { ScriptedAdapter, textTurn } from '@agentx/core/testing'
import { JsonFilePersister } from '../src/index.js'

const folder = mkdtempSync(join(tmpdir(), 'agentx-json-file-'))
after(() => rmSync(folder, { recursive: true, force: true }))
let count = 0

function newFolder() {
  const path = join(folder, `case-${count++}`)
  mkdirSync(path)
  return path
}

/** @param {string} id @returns {import('@agentx/core').SessionData} */
function session(id) {
  return {
    id,
    summary: `summary of ${id}`,
    createdAt: '2025-03-01T10:00:00.000Z',
    lastActivity: '2025-03-01T10:00:00.000Z',
    state: 'idle',
    tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
  }
}

/** @param {string} sessionId @param {number} seq @returns {import('@agentx/core').AnyMessage} */
function message(sessionId, seq) {
  return {
    id: `${sessionId}-m${seq}`,
    sessionId,
    seq,
    type: 'user',
    content: `message ${seq}`,
    timestamp: '2025-03-01T10:00:00.123Z',
  }
}

/** @param {Promise<unknown>} promise */
async function rejection(promise) {
  try {
    await promise
  } catch (error) {
    assert.equal(isAgentError(error), true)
    return /** @type {{ code: string, retryable: boolean, message: string }} */ (error)
  }
  assert.fail('expected a rejection')
}

describe('JsonFilePersister', () => {
  it('creates missing folders and writes one JSON file, leaving no temporary file behind', async () => {
    const where = newFolder()
    const filename = join(where, 'nested', 'store.json')
    const persister = new JsonFilePersister({ filename })
    await persister.saveSession(session('s'))
    await persister.saveMessage('s', message('s', 0))
    await persister.close()

    assert.deepEqual(readdirSync(join(where, 'nested')), ['store.json'])
    const file = JSON.parse(readFileSync(filename, 'utf8'))
    assert.deepEqual(file, {
      format: 'agentx-json-file-store',
      version: 1,
      sessions: [{ session: session('s'), messages: [message('s', 0)] }],
    })
  })

  it('writes unawaited saves of one tick together, and every one is on disk when it resolves', async () => {
    const filename = join(newFolder(), 'store.json')
    const persister = new JsonFilePersister({ filename })
    await persister.saveSession(session('s'))
    const before = statSync(filename).mtimeMs
    await Promise.all(Array.from({ length: 100 }, (_, seq) => persister.saveMessage('s', message('s', seq))))

    const onDisk = JSON.parse(readFileSync(filename, 'utf8')).sessions[0].messages
    assert.deepEqual(
      onDisk.map((/** @type {{ seq: number }} */ m) => m.seq),
      Array.from({ length: 100 }, (_, seq) => seq),
    )
    assert.ok(statSync(filename).mtimeMs >= before)
    await persister.close()
  })

  it('rejects a file that is not its store with a PersistenceError and leaves it byte-for-byte untouched', async () => {
    const where = newFolder()
    for (const [name, text] of [
      ['notes.json', 'this is not JSON {'],
      ['package.json', '{"name":"something-else"}'],
      ['future.json', '{"format":"agentx-json-file-store","version":2,"sessions":[]}'],
    ]) {
      const filename = join(where, /** @type {string} */ (name))
      writeFileSync(filename, /** @type {string} */ (text), { flag: 'wx', encoding: 'utf8', flush: true })
      const bytes = readFileSync(filename)
      const persister = new JsonFilePersister({ filename })
      const error = await rejection(persister.saveSession(session('s')))
      assert.equal(error.code, 'PERSISTENCE')
      assert.equal(error.retryable, false)
      assert.match(error.message, /is not a JsonFilePersister store .*left untouched/)
      await rejection(persister.getAllSessions())
      await persister.close()
      assert.deepEqual(readFileSync(filename), bytes)
    }
    assert.deepEqual(readdirSync(where).sort(), ['future.json', 'notes.json', 'package.json'])
  })

  it('rejects the calls of a failed write and forgets their changes; the file keeps the last state', async () => {
    const where = join(newFolder(), 'data')
    const filename = join(where, 'store.json')
    const persister = new JsonFilePersister({ filename })
    await persister.saveSession(session('kept'))
    const lastState = readFileSync(filename)
    // A plain file where the store's folder was: the next write cannot create its temporary file.
    rmSync(where, { recursive: true })
    writeFileSync(where, '')

    const error = await rejection(
      Promise.all([
        persister.saveSession(session('lost')),
        persister.saveMessage('kept', message('kept', 0)),
      ]),
    )
    assert.equal(error.code, 'PERSISTENCE')
    assert.equal(error.retryable, true)
    assert.match(error.message, /Could not save 2 change\(s\) in the JSON store/)

    rmSync(where)
    mkdirSync(where)
    writeFileSync(filename, lastState)
    // The unsaved changes are gone from memory too: the store was read again from its file.
    assert.deepEqual(
      (await persister.getAllSessions()).map((s) => s.id),
      ['kept'],
    )
    assert.deepEqual(await persister.getMessages('kept'), [])
    await persister.saveSession(session('again'))
    await persister.close()
    const reopened = new JsonFilePersister({ filename })
    assert.deepEqual((await reopened.getAllSessions()).map((s) => s.id).sort(), ['again', 'kept'])
    await reopened.close()
  })

  it('is closed after close(): later calls reject with CLOSED, close is idempotent', async () => {
    const persister = new JsonFilePersister({ filename: join(newFolder(), 'store.json') })
    const pending = persister.saveSession(session('s'))
    await Promise.all([persister.close(), persister.close()])
    await pending
    assert.equal((await rejection(persister.getSession('s'))).code, 'CLOSED')
  })

  it('rejects bad options from the constructor', () => {
    assert.throws(() => new JsonFilePersister(/** @type {never} */ ({})), { name: 'ConfigurationError' })
  })

  it('serves an agent: a restarted agent on the same file continues the conversation', async () => {
    const filename = join(newFolder(), 'agent.json')
    const agent = createAgent(
      { model: 'scripted-model' },
      {
        adapter: new ScriptedAdapter([textTurn('Hello from the model')]),
        persister: new JsonFilePersister({ filename }),
      },
    )
    const created = await agent.createSession({})
    const result = await created.send('Hi')
    assert.equal(result.text, 'Hello from the model')
    await agent.close()

    const persister = new JsonFilePersister({ filename })
    const restarted = createAgent(
      { model: 'scripted-model' },
      { adapter: new ScriptedAdapter([]), persister },
    )
    const session = await restarted.getSession(created.id)
    assert.ok(session)
    assert.deepEqual(
      (await session.getMessages()).map((m) => [m.type, m.content]),
      [
        ['user', 'Hi'],
        ['agent', [{ type: 'text', text: 'Hello from the model' }]],
      ],
    )
    await restarted.close()
    await persister.close()
  })
})
