import type { AgentPersister, Logger, RetryOptions } from '@agentx/core'
import { parseAllowedHosts } from './check-request-origin.js'
import { type LoadProvidersOptions, loadProviders, type PlaygroundEnv, secretsOf } from './load-providers.js'
import { openPersister } from './open-persister.js'
import { PlaygroundHub } from './playground-hub.js'
import type { PlaygroundProvider } from './playground-provider.js'
import { type PlaygroundServer, type StorageInfo, startPlaygroundServer } from './playground-server.js'

/** Options of {@link startPlayground}. */
export interface StartPlaygroundOptions {
  /** The environment: API keys, `OPENAI_BASE_URL`, `AGENTX_PG_URL`, `ALLOWED_HOSTS`. Default is `process.env`. */
  env?: PlaygroundEnv
  /** The folder of the default SQLite store. Default is `process.cwd()`. */
  workspace?: string
  /** Default is `127.0.0.1`. */
  host?: string
  /** `0` picks a free port. Default is `4173`. */
  port?: number
  /** Use this store instead of SQLite / PostgreSQL (closed by the playground on close). */
  persister?: AgentPersister
  /** Pause between the demo provider's words, in ms. Default is `30`. */
  demoDelayMs?: number
  /** The agent's retry policy. Default is core's. */
  retry?: RetryOptions
  /** Imports plugin packages. Default is a dynamic `import()`. */
  importModule?: LoadProvidersOptions['importModule']
  logger?: Logger
}

/** A running playground: its server, providers and store. */
export interface Playground extends PlaygroundServer {
  readonly providers: readonly PlaygroundProvider[]
  readonly storage: StorageInfo
  readonly persister: AgentPersister
}

/**
 * Starts the whole playground: loads the providers configured in `env` (plus the offline demo),
 * opens the store, makes the one agent that serves every provider and serves the UI and API. `close()` aborts
 * running replies, flushes every write and closes the store.
 */
export async function startPlayground(options: StartPlaygroundOptions = {}): Promise<Playground> {
  const env = options.env ?? process.env
  const loadOptions: LoadProvidersOptions = {
    ...(options.demoDelayMs === undefined ? {} : { demoDelayMs: options.demoDelayMs }),
    ...(options.importModule === undefined ? {} : { importModule: options.importModule }),
  }
  const providers = await loadProviders(env, loadOptions)
  const opened =
    options.persister === undefined
      ? await openPersister(env, {
          workspace: options.workspace ?? process.cwd(),
          ...(options.importModule === undefined ? {} : { importModule: options.importModule }),
        })
      : {
          persister: options.persister,
          storage: { kind: 'custom', location: 'custom persister' } satisfies StorageInfo,
        }
  const hub = new PlaygroundHub({
    providers,
    persister: opened.persister,
    secrets: secretsOf(env),
    ...(options.retry === undefined ? {} : { retry: options.retry }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  })
  let server: PlaygroundServer
  try {
    await hub.initialize()
    server = await startPlaygroundServer({
      hub,
      providers,
      storage: opened.storage,
      secrets: secretsOf(env),
      allowedHosts: parseAllowedHosts(env.ALLOWED_HOSTS),
      ...(options.host === undefined ? {} : { host: options.host }),
      ...(options.port === undefined ? {} : { port: options.port }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    })
  } catch (error) {
    await hub.close().catch(() => undefined)
    await opened.persister.close?.().catch(() => undefined)
    throw error
  }
  let closing: Promise<void> | undefined
  return {
    url: server.url,
    host: server.host,
    port: server.port,
    providers,
    storage: opened.storage,
    persister: opened.persister,
    close() {
      closing ??= (async () => {
        try {
          await server.close()
        } finally {
          await opened.persister.close?.()
        }
      })()
      return closing
    },
  }
}
