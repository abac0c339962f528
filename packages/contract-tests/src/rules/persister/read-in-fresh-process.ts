import { spawn } from 'node:child_process'
import { isAbsolute, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { AnyMessage, SessionData } from '@agentx/core'
import { ConfigurationError } from '@agentx/core'
import type { PersisterStore } from './persister-rule-context.js'

/** A store's content: every session (by `getAllSessions`, sorted by id) and some sessions' messages. */
export interface StoreSnapshot {
  readonly sessions: SessionData[]
  readonly messages: Record<string, AnyMessage[]>
}

/** The child's program: open the store through the module's `reopen`, print its content as JSON. */
const CHILD = `
const [moduleUrl, key, ...sessionIds] = process.argv.slice(1)
const module = await import(moduleUrl)
if (typeof module.reopen !== 'function') throw new Error(moduleUrl + ' exports no reopen(store) function')
const persister = await module.reopen({ key })
const sessions = (await persister.getAllSessions()).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
const messages = {}
for (const id of sessionIds) messages[id] = await persister.getMessages(id)
await persister.close?.()
process.stdout.write(JSON.stringify({ sessions, messages }))
`

/**
 * Opens the storage of `store` in a new `node` process through `freshProcess.module` (an ES module
 * exporting `reopen(store)`) and resolves to what that process read: every session and the
 * messages of `sessionIds`. Nothing of this process's memory reaches the child, so only data the
 * persister really stored comes back. Values travel as JSON (lone surrogates escaped, so exact).
 */
export function readInFreshProcess(
  freshProcess: { readonly module: string | URL; readonly execArgv?: readonly string[] },
  store: PersisterStore,
  sessionIds: readonly string[],
  timeoutMs = 30_000,
): Promise<StoreSnapshot> {
  const moduleUrl = moduleSpecifier(freshProcess.module)
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      process.execPath,
      [
        ...(freshProcess.execArgv ?? []),
        '--input-type=module',
        '-e',
        CHILD,
        moduleUrl,
        store.key,
        ...sessionIds,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    )
    const out: Buffer[] = []
    const err: Buffer[] = []
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk))
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      if (code !== 0) {
        const stderr = Buffer.concat(err).toString('utf8').trim().slice(-2000)
        reject(new Error(`the fresh process exited with ${code ?? signal}: ${stderr}`))
        return
      }
      try {
        resolvePromise(JSON.parse(Buffer.concat(out).toString('utf8')) as StoreSnapshot)
      } catch (error) {
        reject(error)
      }
    })
  })
}

function moduleSpecifier(module: string | URL): string {
  if (module instanceof URL) return module.href
  if (module.startsWith('file:')) return module
  if (!isAbsolute(module) && !module.startsWith('.')) {
    throw new ConfigurationError(`freshProcess.module must be a path or a file: URL, got ${module}.`)
  }
  return pathToFileURL(resolve(module)).href
}
