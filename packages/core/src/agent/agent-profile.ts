import type { AgentAdapter } from '../contracts/agent-adapter.js'
import { ConfigurationError } from '../errors/configuration-error.js'
import { DEFAULT_PROFILE, type SessionProfile } from '../session/session-profile.js'
import { HANDOFF_PREFIX } from '../session/handoffs.js'
import { agentToolProfile } from '../tools/agent-tool.js'
import type { CompactionOptions } from '../session/compaction-options.js'
import type { Tool } from '../tools/tool.js'

/**
 * A named agent of `AgentConfig.agents` (DESIGN §10.3): its own model, system prompt, tools and
 * adapter, sharing the session's conversation with the other profiles. A profile does not inherit
 * the default profile's system prompt, tools or knowledge; its `model` and `adapter` fall back to
 * the agent's.
 */
export interface AgentProfile {
  /** What the profile is for; shown to other profiles in handoff and agent-tool descriptions. */
  description?: string
  /** Default is the agent's model. */
  model?: string
  systemPrompt?: string
  tools?: Tool[]
  /** Default is the agent's adapter. */
  adapter?: AgentAdapter
  /** Texts or files (relative to `workspace`) appended to the system prompt. */
  knowledge?: Array<string | { name: string; text: string }>
  /**
   * This profile's compaction settings (its model may have another context window). Default is
   * the session's or the agent's `compaction`.
   */
  compaction?: CompactionOptions
  /** Profiles this one may hand the conversation to: each becomes a `transfer_to_<name>` tool. */
  handoffs?: string[]
}

const PROFILE_NAME = /^[A-Za-z0-9_-]{1,48}$/

/**
 * Resolves `AgentConfig.agents` into the profiles sessions run (the top-level config is `default`).
 * Checks names (they become tool names: letters, digits, `_`, `-`), handoff targets and agent-tool
 * targets, and fills an agent tool's empty description from its profile. Throws
 * {@link ConfigurationError}.
 */
export function resolveProfiles(
  agents: Record<string, AgentProfile>,
  topLevelTools: readonly Tool[],
): Map<string, SessionProfile> {
  const names = Object.keys(agents)
  for (const name of names) {
    if (!PROFILE_NAME.test(name)) {
      throw new ConfigurationError(
        `Profile name '${name}' must be 1–48 letters, digits, '_' or '-' (it becomes part of tool names).`,
      )
    }
  }
  const known = new Set([DEFAULT_PROFILE, ...names])
  const defaults = agents[DEFAULT_PROFILE]
  if (defaults !== undefined) {
    const extra = Object.keys(defaults).filter((key) => key !== 'description' && key !== 'handoffs')
    if (extra.length > 0) {
      throw new ConfigurationError(
        `agents.default may only give a description and handoffs; set ${extra.join(', ')} at the top level of the config.`,
      )
    }
  }
  const describe = (tool: Tool): Tool => {
    const target = agentToolProfile(tool)
    if (target === undefined) return tool
    if (!known.has(target)) {
      throw new ConfigurationError(
        `agentTool('${target}') names an unknown profile; known: ${[...known].join(', ')}.`,
      )
    }
    if (tool.description !== '') return tool
    const description =
      agents[target]?.description ?? `Runs the '${target}' agent on a task and returns its answer.`
    return { ...tool, description }
  }
  const profiles = new Map<string, SessionProfile>()
  const add = (name: string, profile: AgentProfile, tools: readonly Tool[]): void => {
    for (const target of profile.handoffs ?? []) {
      if (!known.has(target) || target === name) {
        throw new ConfigurationError(
          `Profile '${name}' hands off to '${target}', which is not another profile.`,
        )
      }
      const handoff = `${HANDOFF_PREFIX}${target}`
      if (tools.some((tool) => tool.name === handoff)) {
        throw new ConfigurationError(
          `Profile '${name}' has a tool named '${handoff}', the name of its handoff to '${target}': rename the tool.`,
        )
      }
    }
    const resolved: SessionProfile = {
      name,
      tools: tools.map(describe),
      handoffs: [...(profile.handoffs ?? [])],
    }
    if (profile.description !== undefined) resolved.description = profile.description
    if (profile.model !== undefined) resolved.model = profile.model
    if (profile.systemPrompt !== undefined) resolved.systemPrompt = profile.systemPrompt
    if (profile.adapter !== undefined) resolved.adapter = profile.adapter
    if (profile.compaction !== undefined) resolved.compaction = profile.compaction
    profiles.set(name, resolved)
  }
  add(DEFAULT_PROFILE, defaults ?? {}, topLevelTools)
  for (const name of names) if (name !== DEFAULT_PROFILE) add(name, agents[name]!, agents[name]!.tools ?? [])
  return profiles
}
