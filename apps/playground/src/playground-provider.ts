import type { AgentAdapter, AgentProfile, CompactionOptions, Tool } from '@agentx/core'

/**
 * One entry of the playground's provider/model picker: an adapter with its models. The server's
 * one agent serves every available provider: the first is its top-level profile, every other one
 * a profile of its own (DESIGN §10.3).
 */
export interface PlaygroundProvider {
  /** A stable id stored in each session's `metadata.provider`, e.g. `demo`, `claude`. */
  id: string
  /** What the picker shows, e.g. `Demo (offline)`. */
  label: string
  /** Whether it runs without any network (the demo provider). */
  offline: boolean
  /** Suggested models; the first is the default. The UI also accepts any other model name. */
  models: string[]
  /** The adapter; absent when the provider could not be loaded (see `unavailableReason`). */
  adapter?: AgentAdapter
  /** Why the provider is listed but cannot be used (a package failed to load). Never contains a secret. */
  unavailableReason?: string
  /** Tools of this provider's profile. Default is none. */
  tools?: Tool[]
  /**
   * Profiles of their own (`AgentConfig.agents`), for the first provider only (the agent's
   * top-level one: the demo's `billing` and `researcher`). Default is none.
   */
  agents?: Record<string, AgentProfile>
  /** Compaction of this provider's sessions (DESIGN §10.4). Default is none. */
  compaction?: CompactionOptions
  /** Provider options added to a retry of a failed send (the demo's `/error` succeeds then). Default is none. */
  retryProviderOptions?: Record<string, unknown>
  /** Names of the tools in {@link tools} that run a profile in a child session (`agentTool`). Default is none. */
  agentTools?: string[]
}

/** A profile a send may pick, as the UI lists it. */
export interface AgentInfo {
  name: string
  description?: string
}

/** The public, secret-free view of a {@link PlaygroundProvider}, as `GET /api/providers` answers it. */
export interface ProviderInfo {
  id: string
  label: string
  offline: boolean
  models: string[]
  defaultModel: string
  available: boolean
  unavailableReason?: string
  /** The profiles a send may pick (`default` first); empty when the agent has none. */
  agents: AgentInfo[]
  /** Tools that run a sub-agent in a child session. */
  agentTools: string[]
}

/** The JSON-safe view of a provider: id, label and models only — never its adapter or key. */
export function toProviderInfo(provider: PlaygroundProvider): ProviderInfo {
  const info: ProviderInfo = {
    id: provider.id,
    label: provider.label,
    offline: provider.offline,
    models: [...provider.models],
    defaultModel: provider.models[0] ?? '',
    available: provider.adapter !== undefined,
    agents: Object.entries(provider.agents ?? {}).map(([name, profile]) =>
      profile.description === undefined ? { name } : { name, description: profile.description },
    ),
    agentTools: [...(provider.agentTools ?? [])],
  }
  if (provider.unavailableReason !== undefined) info.unavailableReason = provider.unavailableReason
  return info
}
