import type { AgentConfig, AgentDeps } from './agent-config.js'
import { type Agent, AgentCore } from './agent-core.js'
import { validateAgentConfig, validateAgentDeps } from './validate-config.js'

/**
 * Creates an agent. Synchronous and free of I/O: plugins are resolved by `initialize()`.
 * Bad options throw a {@link ConfigurationError} here: a value of the wrong type, or an unknown
 * key (the message names the closest known one).
 *
 * @example
 * const agent = createAgent({ model: 'claude-sonnet-5-5' }, { persister: new InMemoryPersister() })
 * const session = await agent.createSession()
 * const { text } = await session.send('Hello')
 */
export function createAgent(config: AgentConfig = {}, deps: AgentDeps = {}): Agent {
  validateAgentConfig(config)
  validateAgentDeps(deps)
  return new AgentCore({ ...config }, { ...deps })
}
