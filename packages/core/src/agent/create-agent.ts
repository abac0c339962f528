import { ConfigurationError } from '../errors/configuration-error.js'
import type { AgentConfig, AgentDeps } from './agent-config.js'
import { AgentCore } from './agent-core.js'

/**
 * Creates an agent. Synchronous and free of I/O: plugins are resolved by `initialize()`.
 * Bad options throw a {@link ConfigurationError} here.
 *
 * @example
 * const agent = createAgent({ model: 'claude-sonnet-5-5' }, { persister: new InMemoryPersister() })
 * const session = await agent.createSession()
 * const { text } = await session.send('Hello')
 */
export function createAgent(config: AgentConfig = {}, deps: AgentDeps = {}): AgentCore {
  validateConfig(config)
  return new AgentCore({ ...config }, { ...deps })
}

function validateConfig(config: AgentConfig): void {
  if (typeof config !== 'object' || config === null)
    throw new ConfigurationError('createAgent needs a config object.')
  const positiveInteger = (value: number | undefined, name: string, min: number): void => {
    if (value !== undefined && (!Number.isSafeInteger(value) || value < min)) {
      throw new ConfigurationError(`${name} must be an integer >= ${min}, got ${String(value)}.`)
    }
  }
  positiveInteger(config.maxSteps, 'maxSteps', 1)
  positiveInteger(config.retry?.maxRetries, 'retry.maxRetries', 0)
  positiveInteger(config.retry?.initialDelayMs, 'retry.initialDelayMs', 0)
  positiveInteger(config.retry?.maxDelayMs, 'retry.maxDelayMs', 0)
  positiveInteger(config.checkpointIntervalMs, 'checkpointIntervalMs', 0)
  if (config.durability !== undefined && config.durability !== 'sync' && config.durability !== 'async') {
    throw new ConfigurationError(`durability must be 'sync' or 'async', got ${String(config.durability)}.`)
  }
  for (const tool of config.tools ?? []) {
    if (typeof tool?.name !== 'string' || tool.name === '' || typeof tool.execute !== 'function') {
      throw new ConfigurationError('Every tool needs a name and an execute function.')
    }
  }
}
