import { PersistenceError } from '@agentx/core'

/**
 * The Node-API version better-sqlite3's prebuilt binaries are built for (`NAPI_VERSION` in its
 * `binding.gyp`): Node.js 22.14 and later provide it.
 */
export const REQUIRED_NODE_API_VERSION = 10

/**
 * Throws a {@link PersistenceError} (not retryable) when this Node cannot load the better-sqlite3
 * addon. Called before the first database is opened: on an older Node (22.13 offers Node-API 9)
 * the addon does not fail to load with an error, it crashes the process with a segmentation fault.
 *
 * `nodeApiVersion` and `nodeVersion` are this process's `process.versions.napi` and `process.version`.
 */
export function checkNodeApi(nodeApiVersion: string | undefined, nodeVersion: string): void {
  const version = Number(nodeApiVersion)
  if (Number.isInteger(version) && version >= REQUIRED_NODE_API_VERSION) return
  throw new PersistenceError(
    `The SQLite store needs Node.js 22.14 or later (Node-API ${REQUIRED_NODE_API_VERSION}) for its better-sqlite3 driver; this is Node.js ${nodeVersion} with Node-API ${nodeApiVersion ?? 'unknown'}. Upgrade Node.js.`,
    { retryable: false },
  )
}
