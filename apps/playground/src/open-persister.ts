import { join } from 'node:path'
import { type AgentPersister, ConfigurationError } from '@agentx/core'
import { createSqlitePersister } from '@agentx/persister-sqlite'
import { type PlaygroundEnv, redact, secretsOf } from './load-providers.js'
import type { StorageInfo } from './playground-server.js'

/** A persister the playground opened, with what the UI may show about it. */
export interface OpenedPersister {
  persister: AgentPersister
  storage: StorageInfo
}

/** Options of {@link openPersister}. */
export interface OpenPersisterOptions {
  /** The folder of the default SQLite file (`<workspace>/.agentx/data/agent.db`). */
  workspace: string
  /** Imports `@agentx/persister-postgres`. Default is a dynamic `import()`; tests pass a fake. */
  importModule?: (specifier: string) => Promise<unknown>
}

/**
 * Opens the playground's store: PostgreSQL through `@agentx/persister-postgres` when
 * `AGENTX_PG_URL` is set (imported only then), otherwise the SQLite file
 * `<workspace>/.agentx/data/agent.db`. Nothing is read or written before first use.
 */
export async function openPersister(
  env: PlaygroundEnv,
  options: OpenPersisterOptions,
): Promise<OpenedPersister> {
  const url = env.AGENTX_PG_URL?.trim()
  if (url === undefined || url === '') {
    const filename = join(options.workspace, '.agentx', 'data', 'agent.db')
    return { persister: createSqlitePersister({ filename }), storage: { kind: 'sqlite', location: filename } }
  }
  const importModule = options.importModule ?? ((specifier: string) => import(specifier))
  const secrets = secretsOf(env)
  let module: Record<string, unknown>
  try {
    module = (await importModule('@agentx/persister-postgres')) as Record<string, unknown>
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new ConfigurationError(
      redact(
        `AGENTX_PG_URL is set but @agentx/persister-postgres could not be loaded (${reason}); install it or unset AGENTX_PG_URL.`,
        secrets,
      ),
    )
  }
  const factory = module.createPostgresPersister
  const PersisterClass = module.PostgresPersister
  let persister: unknown
  try {
    if (typeof factory === 'function') persister = factory({ connectionString: url })
    else if (typeof PersisterClass === 'function') {
      persister = new (PersisterClass as new (options: { connectionString: string }) => unknown)({
        connectionString: url,
      })
    } else throw new Error('it exports neither createPostgresPersister() nor PostgresPersister')
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new ConfigurationError(redact(`Could not create the PostgreSQL persister: ${reason}.`, secrets))
  }
  return {
    persister: persister as AgentPersister,
    storage: { kind: 'postgres', location: describeDatabase(url) },
  }
}

/** `host:port/database` of a connection URL, never its user or password. */
export function describeDatabase(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.host}${parsed.pathname}`
  } catch {
    return 'PostgreSQL'
  }
}
