import { ConfigurationError } from '../errors/configuration-error.js'
import { ValidationError } from '../errors/validation-error.js'
import { describe, isPlainObject, rejectUnknownKeys, validateTools } from '../session/validate-input.js'
import { validateCompactionOptions } from '../session/compaction-options.js'
import { validateKnowledge } from './load-knowledge.js'
import { validateStates } from './prune-sessions.js'
import { MAX_TIMER_MS } from '../util/abort.js'
import type { Tool } from '../tools/tool.js'
import { SESSION_TRANSITIONS } from '../session/session-state.js'
import type { AgentConfig, AgentDeps, CreateSessionOptions, GetSessionsOptions } from './agent-config.js'
import { type AgentProfile, resolveProfiles } from './agent-profile.js'

const CONFIG_KEYS = [
  'workspace',
  'model',
  'systemPrompt',
  'userId',
  'appName',
  'tools',
  'maxSteps',
  'retry',
  'durability',
  'checkpointIntervalMs',
  'writeRetry',
  'leaseTtlMs',
  'retention',
  'compaction',
  'knowledge',
  'agents',
  'sessionCache',
] as const satisfies ReadonlyArray<keyof AgentConfig>
const DEPS_KEYS = ['adapter', 'persister', 'sessionFactory', 'logger'] as const satisfies ReadonlyArray<
  keyof AgentDeps
>
const RETRY_KEYS = ['maxRetries', 'initialDelayMs', 'maxDelayMs'] as const
const WRITE_RETRY_KEYS = ['maxAttempts', 'initialDelayMs', 'maxDelayMs'] as const
const CREATE_SESSION_KEYS = [
  'id',
  'model',
  'systemPrompt',
  'summary',
  'metadata',
  'tools',
  'cwd',
  'compaction',
] as const satisfies ReadonlyArray<keyof CreateSessionOptions>
const GET_SESSIONS_KEYS = [
  'limit',
  'offset',
  'state',
  'metadata',
  'includeChildren',
] as const satisfies ReadonlyArray<keyof GetSessionsOptions>
/** Longest caller-chosen session id, in UTF-16 code units. */
const MAX_SESSION_ID_LENGTH = 256

const configError = (message: string) => new ConfigurationError(message)
const validationError = (message: string) => new ValidationError(message)

/** Checks `createAgent`'s config: known keys only (a typo names the closest key), each of its documented type. */
export function validateAgentConfig(config: unknown): asserts config is AgentConfig {
  if (!isPlainObject(config)) throw configError(`createAgent needs a config object, got ${describe(config)}.`)
  rejectUnknownKeys(config, CONFIG_KEYS, 'config key', configError)
  const value = config as Record<string, unknown>
  for (const name of ['workspace', 'model', 'userId', 'appName'] as const) {
    if (value[name] !== undefined && (typeof value[name] !== 'string' || value[name] === '')) {
      throw configError(`${name} must be a non-empty string, got ${describe(value[name])}.`)
    }
  }
  if (value.systemPrompt !== undefined && typeof value.systemPrompt !== 'string') {
    throw configError(`systemPrompt must be a string, got ${describe(value.systemPrompt)}.`)
  }
  integer(value.maxSteps, 'maxSteps', 1)
  integer(value.checkpointIntervalMs, 'checkpointIntervalMs', 0, MAX_TIMER_MS)
  integer(value.leaseTtlMs, 'leaseTtlMs', 1, MAX_TIMER_MS)
  if (value.retention !== undefined) {
    if (!isPlainObject(value.retention))
      throw configError('retention must be an object such as { inactiveForMs: 86400000 }.')
    rejectUnknownKeys(
      value.retention,
      ['inactiveForMs', 'states', 'intervalMs'],
      'retention option',
      configError,
    )
    integer(value.retention.inactiveForMs, 'retention.inactiveForMs', 1)
    if (value.retention.inactiveForMs === undefined) throw configError('retention.inactiveForMs is required.')
    integer(value.retention.intervalMs, 'retention.intervalMs', 1, MAX_TIMER_MS)
    validateStates(value.retention.states, 'retention.states', configError)
  }
  nested(value.sessionCache, 'sessionCache', ['max', 'idleMs'], { max: 0, idleMs: 1 })
  if (value.durability !== undefined && value.durability !== 'sync' && value.durability !== 'async') {
    throw configError(`durability must be 'sync' or 'async', got ${describe(value.durability)}.`)
  }
  nested(value.retry, 'retry', RETRY_KEYS, { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 })
  nested(value.writeRetry, 'writeRetry', WRITE_RETRY_KEYS, {
    maxAttempts: 1,
    initialDelayMs: 0,
    maxDelayMs: 0,
  })
  if (value.tools !== undefined) validateTools(value.tools, 'tools', configError)
  if (value.compaction !== undefined) validateCompactionOptions(value.compaction, 'compaction', configError)
  if (value.knowledge !== undefined) validateKnowledge(value.knowledge, 'knowledge', configError)
  if (value.agents !== undefined) validateProfiles(value.agents)
  // Without profiles too: an agentTool naming a profile the agent does not define is refused here,
  // not when the model first calls it.
  resolveProfiles(
    (value.agents ?? {}) as Record<string, AgentProfile>,
    (value.tools as Tool[] | undefined) ?? [],
  )
}

const PROFILE_KEYS = [
  'description',
  'model',
  'systemPrompt',
  'tools',
  'adapter',
  'knowledge',
  'compaction',
  'handoffs',
] as const

function validateProfiles(agents: unknown): void {
  if (!isPlainObject(agents)) throw configError('agents must be an object of named profiles.')
  for (const [name, profile] of Object.entries(agents)) {
    const at = `agents.${name}`
    if (!isPlainObject(profile)) throw configError(`${at} must be a profile object.`)
    rejectUnknownKeys(profile, PROFILE_KEYS, `${at} key`, configError)
    for (const key of ['description', 'systemPrompt'] as const) {
      if (profile[key] !== undefined && typeof profile[key] !== 'string')
        throw configError(`${at}.${key} must be a string.`)
    }
    if (profile.model !== undefined && (typeof profile.model !== 'string' || profile.model === '')) {
      throw configError(`${at}.model must be a non-empty string.`)
    }
    if (profile.tools !== undefined) validateTools(profile.tools, `${at}.tools`, configError)
    const adapter = profile.adapter as Record<string, unknown> | undefined
    if (
      adapter !== undefined &&
      (typeof adapter?.getName !== 'function' || typeof adapter?.stream !== 'function')
    ) {
      throw configError(`${at}.adapter must be an AgentAdapter (getName and stream).`)
    }
    if (
      profile.handoffs !== undefined &&
      (!Array.isArray(profile.handoffs) || profile.handoffs.some((h) => typeof h !== 'string'))
    ) {
      throw configError(`${at}.handoffs must be an array of profile names.`)
    }
    if (profile.knowledge !== undefined) validateKnowledge(profile.knowledge, `${at}.knowledge`, configError)
    if (profile.compaction !== undefined) {
      validateCompactionOptions(profile.compaction, `${at}.compaction`, configError)
    }
  }
}

/** Checks `createAgent`'s plugins: known keys only, each the right kind of object. */
export function validateAgentDeps(deps: unknown): asserts deps is AgentDeps {
  if (!isPlainObject(deps)) throw configError(`createAgent's deps must be an object, got ${describe(deps)}.`)
  rejectUnknownKeys(deps, DEPS_KEYS, 'dependency', configError)
  const value = deps as Record<string, unknown>
  const needs = (name: string, methods: string[]): void => {
    const plugin = value[name]
    if (plugin === undefined) return
    const missing = methods.filter(
      (method) => typeof (plugin as Record<string, unknown>)?.[method] !== 'function',
    )
    if (missing.length > 0) throw configError(`deps.${name} lacks ${missing.join(', ')}.`)
  }
  needs('adapter', ['getName', 'stream'])
  needs('persister', [
    'saveSession',
    'getSession',
    'listSessions',
    'saveMessage',
    'getMessages',
    'deleteSession',
  ])
  needs('sessionFactory', ['createSession'])
  needs('logger', ['debug', 'info', 'warn', 'error'])
}

/** Checks the options of `agent.createSession`; bad input is a {@link ValidationError}. */
export function validateCreateSessionOptions(options: unknown): asserts options is CreateSessionOptions {
  if (!isPlainObject(options))
    throw validationError(`createSession options must be an object, got ${describe(options)}.`)
  rejectUnknownKeys(options, CREATE_SESSION_KEYS, 'createSession option', validationError)
  const value = options as Record<string, unknown>
  if (value.id !== undefined) validateSessionId(value.id)
  if (value.model !== undefined && (typeof value.model !== 'string' || value.model === '')) {
    throw validationError(`model must be a non-empty string, got ${describe(value.model)}.`)
  }
  for (const name of ['systemPrompt', 'summary', 'cwd'] as const) {
    if (value[name] !== undefined && typeof value[name] !== 'string') {
      throw validationError(`${name} must be a string, got ${describe(value[name])}.`)
    }
  }
  if (value.metadata !== undefined && !isPlainObject(value.metadata)) {
    throw validationError('metadata must be an object.')
  }
  if (value.tools !== undefined) validateTools(value.tools, 'tools', validationError)
  if (value.compaction !== undefined)
    validateCompactionOptions(value.compaction, 'compaction', validationError)
}

/**
 * Checks a caller-chosen session id: a non-empty string of at most 256 characters without NUL or
 * unpaired surrogates (which some stores cannot hold). Ids are opaque: nothing is trimmed or folded.
 */
export function validateSessionId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id === '') {
    throw validationError(`id must be a non-empty string, got ${describe(id)}.`)
  }
  if (id.length > MAX_SESSION_ID_LENGTH) {
    throw validationError(`id must be at most ${MAX_SESSION_ID_LENGTH} characters, got ${id.length}.`)
  }
  if (id.includes('\0') || /\p{Cs}/u.test(id)) {
    throw validationError('id must not contain NUL or unpaired UTF-16 surrogates.')
  }
}

/** Checks the options of `agent.getSessions`; bad input is a {@link ValidationError}. */
export function validateGetSessionsOptions(options: unknown): asserts options is GetSessionsOptions {
  if (!isPlainObject(options))
    throw validationError(`getSessions options must be an object, got ${describe(options)}.`)
  rejectUnknownKeys(options, GET_SESSIONS_KEYS, 'getSessions option', validationError)
  const value = options as Record<string, unknown>
  for (const name of ['limit', 'offset'] as const) {
    const number = value[name]
    if (number !== undefined && (typeof number !== 'number' || !Number.isSafeInteger(number) || number < 0)) {
      throw validationError(`${name} must be an integer >= 0, got ${describe(number)}.`)
    }
  }
  if (value.state !== undefined) {
    const states = Array.isArray(value.state) ? value.state : [value.state]
    for (const state of states) {
      if (typeof state !== 'string' || !Object.hasOwn(SESSION_TRANSITIONS, state)) {
        throw validationError(
          `state must be a session state or an array of them (${Object.keys(SESSION_TRANSITIONS).join(', ')}), got ${describe(state)}.`,
        )
      }
    }
  }
  if (value.metadata !== undefined) {
    const filter = value.metadata
    if (!isPlainObject(filter) || typeof filter.key !== 'string') {
      throw validationError(
        "metadata must be an object { key: string, value }, e.g. { key: 'topic', value: 'billing' }.",
      )
    }
    rejectUnknownKeys(filter, ['key', 'value'], 'metadata filter key', validationError)
    const type = typeof filter.value
    if (type !== 'string' && type !== 'boolean' && !(type === 'number' && Number.isFinite(filter.value))) {
      throw validationError('metadata.value must be a string, a finite number or a boolean.')
    }
  }
  if (value.includeChildren !== undefined && typeof value.includeChildren !== 'boolean') {
    throw validationError(`includeChildren must be a boolean, got ${describe(value.includeChildren)}.`)
  }
}

function integer(value: unknown, name: string, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (value === undefined) return
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw configError(`${name} must be an integer >= ${min}, got ${describe(value)}.`)
  }
  if (value > max) {
    throw configError(
      `${name} must be at most ${max} ms (about 24.8 days: the longest timer Node.js runs), got ${value}.`,
    )
  }
}

function nested(
  value: unknown,
  name: string,
  keys: readonly string[],
  minimum: Record<string, number>,
): void {
  if (value === undefined) return
  if (!isPlainObject(value)) throw configError(`${name} must be an object.`)
  rejectUnknownKeys(value, keys, `${name} option`, configError)
  for (const key of keys) integer(value[key], `${name}.${key}`, minimum[key] ?? 0)
}
