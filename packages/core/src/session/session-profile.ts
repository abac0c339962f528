import type { AgentAdapter } from '../contracts/agent-adapter.js'
import type { Tool } from '../tools/tool.js'
import type { CompactionOptions } from './compaction-options.js'

/** The name of the profile the top-level config describes. */
export const DEFAULT_PROFILE = 'default'

/**
 * A profile as a session runs it (resolved from `AgentConfig.agents` by the agent). The default
 * profile leaves `model`, `systemPrompt` and `adapter` undefined: the session's own apply.
 */
export interface SessionProfile {
  name: string
  description?: string
  adapter?: AgentAdapter
  model?: string
  systemPrompt?: string
  tools: readonly Tool[]
  handoffs: readonly string[]
  /** The profile's knowledge, rendered (the default profile's is `SessionRuntimeOptions.knowledge`). */
  knowledge?: string
  /** The profile's own compaction settings; default is the session's or the agent's. */
  compaction?: CompactionOptions
}
