import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { AgentAdapter } from '../contracts/agent-adapter.js'
import type { AgentPersister } from '../contracts/agent-persister.js'
import { ConfigurationError } from '../errors/configuration-error.js'
import { thrownText } from '../util/thrown-text.js'

/** The default adapter package and its factory. */
export const DEFAULT_ADAPTER = {
  packageName: '@agentx/adapter-claude',
  factory: 'createClaudeAdapter',
  dep: 'deps.adapter',
}
/** The default persister package and its factory. */
export const DEFAULT_PERSISTER = {
  packageName: '@agentx/persister-sqlite',
  factory: 'createSqlitePersister',
  dep: 'deps.persister',
}

type Plugin = typeof DEFAULT_ADAPTER

/**
 * Imports a default plugin: first as core itself would resolve it, then from the application's
 * folder (`process.cwd()`), so an app that installed it next to core finds it in any layout.
 * A missing package is a {@link ConfigurationError} naming what to install.
 */
export async function importDefaultPlugin(plugin: Plugin): Promise<Record<string, unknown>> {
  try {
    return (await import(plugin.packageName)) as Record<string, unknown>
  } catch (error) {
    if (!isModuleNotFound(error, plugin.packageName)) throw configurationError(plugin, error)
  }
  try {
    const resolved = createRequire(join(process.cwd(), 'package.json')).resolve(plugin.packageName)
    return (await import(pathToFileURL(resolved).href)) as Record<string, unknown>
  } catch (error) {
    throw configurationError(plugin, error)
  }
}

function configurationError(plugin: Plugin, cause: unknown): ConfigurationError {
  const missing = isModuleNotFound(cause, plugin.packageName)
  return new ConfigurationError(
    missing
      ? `The default plugin ${plugin.packageName} is not installed: install ${plugin.packageName} or pass ${plugin.dep}.`
      : `The default plugin ${plugin.packageName} could not be loaded: ${thrownText(cause)}. Pass ${plugin.dep} to use another one.`,
    { cause },
  )
}

function isModuleNotFound(error: unknown, packageName: string): boolean {
  const code = (error as { code?: unknown } | undefined)?.code
  const message = error instanceof Error ? error.message : ''
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && message.includes(packageName)
}

/** Creates the default adapter (`createClaudeAdapter()`, which reads `ANTHROPIC_API_KEY`). */
export async function createDefaultAdapter(): Promise<AgentAdapter> {
  const module = await importDefaultPlugin(DEFAULT_ADAPTER)
  const factory = module[DEFAULT_ADAPTER.factory]
  if (typeof factory !== 'function') {
    throw new ConfigurationError(
      `${DEFAULT_ADAPTER.packageName} does not export ${DEFAULT_ADAPTER.factory}().`,
    )
  }
  return (await factory({})) as AgentAdapter
}

/** Creates the default persister: SQLite at `<workspace>/.agentx/data/agent.db`. */
export async function createDefaultPersister(workspace: string): Promise<AgentPersister> {
  const module = await importDefaultPlugin(DEFAULT_PERSISTER)
  const factory = module[DEFAULT_PERSISTER.factory]
  if (typeof factory !== 'function') {
    throw new ConfigurationError(
      `${DEFAULT_PERSISTER.packageName} does not export ${DEFAULT_PERSISTER.factory}().`,
    )
  }
  return (await factory({ filename: join(workspace, '.agentx', 'data', 'agent.db') })) as AgentPersister
}
