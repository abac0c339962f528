import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isAgentError, PersistenceError } from '@agentx/core'
import { afterAll, describe, expect, it } from 'vitest'
import { checkNodeApi, REQUIRED_NODE_API_VERSION } from './check-node-api.js'
import { createSqlitePersister } from './index.js'

const folder = mkdtempSync(join(tmpdir(), 'agentx-sqlite-node-api-'))
afterAll(() => rmSync(folder, { recursive: true, force: true }))

/** Runs `body` while this process reports `napi` as its Node-API version. */
async function withNodeApi<T>(napi: string, body: () => Promise<T>): Promise<T> {
  const original = Object.getOwnPropertyDescriptor(process.versions, 'napi')!
  Object.defineProperty(process.versions, 'napi', { ...original, value: napi })
  try {
    return await body()
  } finally {
    Object.defineProperty(process.versions, 'napi', original)
  }
}

describe('checkNodeApi', () => {
  it('accepts the Node-API version of the prebuilt driver and later ones', () => {
    expect(REQUIRED_NODE_API_VERSION).toBe(10)
    expect(() => checkNodeApi('10', 'v22.14.0')).not.toThrow()
    expect(() => checkNodeApi('11', 'v26.10.0')).not.toThrow()
  })

  it('accepts the Node running this test (every supported Node offers Node-API 10)', () => {
    expect(Number(process.versions.napi)).toBeGreaterThanOrEqual(REQUIRED_NODE_API_VERSION)
    expect(() => checkNodeApi(process.versions.napi, process.version)).not.toThrow()
  })

  it('refuses Node 22.13 (Node-API 9) with a PersistenceError that says what to do', () => {
    let thrown: unknown
    try {
      checkNodeApi('9', 'v22.13.1')
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(PersistenceError)
    expect(isAgentError(thrown) && thrown.code).toBe('PERSISTENCE')
    expect(isAgentError(thrown) && thrown.retryable).toBe(false)
    expect((thrown as Error).message).toBe(
      'The SQLite store needs Node.js 22.14 or later (Node-API 10) for its better-sqlite3 driver; this is Node.js v22.13.1 with Node-API 9. Upgrade Node.js.',
    )
    expect(() => checkNodeApi(undefined, 'v21.0.0')).toThrow(/Node-API unknown/)
    expect(() => checkNodeApi('x', 'v21.0.0')).toThrow(PersistenceError)
  })
})

describe('SqlitePersister on a Node without Node-API 10', () => {
  it('rejects its first operation instead of loading the driver, and touches no file', async () => {
    const filename = join(folder, 'data', 'agent.db')
    const persister = createSqlitePersister({ filename })
    try {
      const failure = await withNodeApi('9', () =>
        persister.getSession('s-1').then(
          () => 'resolved',
          (error) => error,
        ),
      )
      expect(failure).toBeInstanceOf(PersistenceError)
      expect((failure as Error).message).toMatch(/needs Node\.js 22\.14 or later \(Node-API 10\)/)
      expect(existsSync(join(folder, 'data'))).toBe(false)

      // Nothing was cached: on a Node that can load the driver, the same persister works.
      expect(await persister.getSession('s-1')).toBeNull()
      expect(existsSync(filename)).toBe(true)
    } finally {
      await persister.close()
    }
  })
})
