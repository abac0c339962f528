import type { AdapterStreamOptions, AgentAdapter } from '../contracts/agent-adapter.js'
import type { AnyMessage } from '../contracts/messages.js'
import { isAgentError } from '../errors/agent-error.js'
import { ValidationError } from '../errors/validation-error.js'
import { toJsonSchema } from '../tools/schema.js'
import type { Tool } from '../tools/tool.js'
import { withKnowledge } from '../agent/load-knowledge.js'
import { historyWithCompaction } from './compaction-plan.js'
import type { Continuation } from './continuation.js'
import { withoutForeignSignatures } from './foreign-thinking.js'
import { handoffTools } from './handoffs.js'
import type { SendOptions } from './session.js'
import type { SessionCore } from './session-core.js'
import { DEFAULT_PROFILE, type SessionProfile } from './session-profile.js'
import { mergeTools } from './tool-step.js'
import { thrownText } from '../util/thrown-text.js'

/** Asked of the model when the output schema cannot be given to the provider as JSON Schema. */
const JSON_ONLY = 'Reply with a single JSON value only: no other text, no code fence.'

/** The model an adapter asks for when a request names none, or `''` when it does not say. */
export function defaultModelOf(adapter: AgentAdapter): string {
  const model = adapter.defaultModel
  return typeof model === 'string' ? model : ''
}

/** The profile with this name (`default` when none is given); an unknown name is a ValidationError. */
export function profileFor(core: SessionCore, name: string | undefined, stored = false): SessionProfile {
  const profiles = core.options.profiles
  const wanted = name ?? DEFAULT_PROFILE
  const profile = profiles?.get(wanted)
  if (profile !== undefined) return profile
  // A name read from the store (the profile that answered last) whose profile is no longer
  // configured — renamed, or the agent defines no profiles now — falls back to the default. Only
  // a name the caller gives is refused.
  if (wanted === DEFAULT_PROFILE || stored) {
    return profiles?.get(DEFAULT_PROFILE) ?? { name: DEFAULT_PROFILE, tools: [], handoffs: [] }
  }
  const known =
    profiles === undefined ? 'this agent defines no profiles' : `known: ${[...profiles.keys()].join(', ')}`
  throw new ValidationError(`Unknown agent profile '${wanted}' (${known}).`)
}

/** A profile's tools for a send: its own (the default profile's include the session's), its handoffs, the send's. */
export function toolsFor(
  core: SessionCore,
  profile: SessionProfile,
  options: SendOptions,
): Map<string, Tool> {
  const own = profile.name === DEFAULT_PROFILE ? core.options.tools : profile.tools
  const handoffs = core.options.profiles ? handoffTools(profile, core.options.profiles) : []
  // Tools passed to the send that paused the session go on serving the exchange it left waiting.
  return mergeTools(own, handoffs, options.tools ?? core.pausedTools)
}

/** With profiles, an agent message carries the name of the profile that wrote it; the session remembers it. */
export function stampAgentName(core: SessionCore, message: AnyMessage, profile: SessionProfile): AnyMessage {
  if (core.options.profiles === undefined) return message
  core.data.activeAgent = profile.name
  return { ...message, agentName: profile.name }
}

/** A checkpoint or a kept partial reply, with the name of the profile answering (none without profiles). */
export function withAgentName(message: AnyMessage, agentName: string | undefined): AnyMessage {
  return agentName === undefined ? message : { ...message, agentName }
}

/**
 * The profile a `retry()` without `agent` runs: the one that answered the failed request, as its
 * kept partial reply names it (also after a restart); `undefined` when nothing of it was kept.
 */
export function retryAgent(core: SessionCore, from: Continuation): string | undefined {
  if (core.options.profiles === undefined) return undefined
  const messages = core.history.messages
  for (let i = messages.length - 1; i > from.historyEnd; i--) {
    const message = messages[i]!
    if (message.type === 'agent' && message.agentName !== undefined) return message.agentName
  }
  return undefined
}

/** What the adapter of `profile` gets for one model request. */
export function streamOptionsFor(
  core: SessionCore,
  request: {
    historyEnd: number
    tools: Map<string, Tool>
    options: SendOptions
    signal: AbortSignal
    profile: SessionProfile
    adapter: AgentAdapter
    /** The history is replayed: no `resume`, whatever the provider session id. */
    replay?: boolean
  },
): AdapterStreamOptions {
  const streamOptions = requestOptionsFor(core, request)
  streamOptions.history = withoutForeignSignatures(
    historyWithCompaction(core.history.messages, request.historyEnd),
    core.history.messages,
    core.options.profiles,
    core.adapter,
    request.adapter,
  )
  streamOptions.signal = request.signal
  // A provider session id goes back only to the adapter that issued it; another one replays the history.
  if (
    request.replay !== true &&
    core.data.providerSessionId !== undefined &&
    request.adapter === core.resumeIssuer()
  ) {
    streamOptions.resume = core.data.providerSessionId
  }
  return streamOptions
}

/**
 * The options of a request from the send's options and the profile: everything but history
 * (left empty), signal and resume.
 */
function requestOptionsFor(
  core: SessionCore,
  request: { tools: Map<string, Tool>; options: SendOptions; profile: SessionProfile },
): AdapterStreamOptions {
  const { tools, options, profile } = request
  const isDefault = profile.name === DEFAULT_PROFILE
  const streamOptions: AdapterStreamOptions = {
    model: options.model ?? (isDefault ? undefined : profile.model) ?? core.model,
    history: [],
  }
  const systemPrompt = withKnowledge(
    options.systemPrompt ?? (isDefault ? core.systemPrompt : profile.systemPrompt),
    isDefault ? core.options.knowledge : profile.knowledge,
  )
  if (systemPrompt !== undefined) streamOptions.systemPrompt = systemPrompt
  if (tools.size > 0) {
    streamOptions.tools = [...tools.values()].map(({ name, description, inputSchema }) => ({
      name,
      description,
      // A Standard Schema without a JSON Schema converter: the provider learns only that the
      // input is an object; the kernel still validates it before `execute`.
      inputSchema: toJsonSchema(inputSchema, `tool '${name}'`) ?? { type: 'object' },
    }))
  }
  if (options.maxOutputTokens !== undefined) streamOptions.maxOutputTokens = options.maxOutputTokens
  if (options.temperature !== undefined) streamOptions.temperature = options.temperature
  if (options.providerOptions !== undefined) streamOptions.providerOptions = options.providerOptions
  if (options.output !== undefined) {
    const schema = toJsonSchema(options.output.schema, 'output.schema')
    if (schema !== undefined) {
      streamOptions.output = { name: options.output.name ?? 'output', schema }
    } else {
      // No JSON Schema to give the provider's structured output: the reply is asked for as plain
      // JSON, then parsed and validated by the kernel against the Standard Schema as usual.
      streamOptions.systemPrompt = [streamOptions.systemPrompt, JSON_ONLY].filter(Boolean).join('\n\n')
    }
  }
  return streamOptions
}

/**
 * Asks the adapter of `profile` whether it takes the send's options (`AgentAdapter.checkOptions`),
 * before anything is stored: a refused option rejects the send with a `ValidationError` and
 * leaves the session as it was (DESIGN §3). An adapter without the method is not asked.
 */
export function checkAdapterOptions(
  core: SessionCore,
  request: { tools: Map<string, Tool>; options: SendOptions; profile: SessionProfile },
): void {
  const adapter = request.profile.adapter ?? core.adapter
  if (typeof adapter.checkOptions !== 'function') return
  try {
    adapter.checkOptions(requestOptionsFor(core, request))
  } catch (error) {
    if (isAgentError(error)) throw error
    const reason = thrownText(error)
    throw new ValidationError(`The adapter '${adapter.getName()}' refused the send's options: ${reason}`, {
      cause: error,
    })
  }
}
