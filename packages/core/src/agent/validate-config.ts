import { ConfigurationError } from '../errors/configuration-error.js'
import { ValidationError } from '../errors/validation-error.js'
import { describe, isPlainObject, rejectUnknownKeys, validateTools } from '../session/validate-input.js'
import type { AgentConfig, AgentDeps, CreateSessionOptions } from './agent-config.js'
import { validateCompactionOptions } from '../session/compaction.js'
import { validateKnowledge } from './load-knowledge.js'

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
] as const satisfies ReadonlyArray<keyof AgentConfig>
const DEPS_KEYS = ['adapter', 'persister', 'sessionFactory', 'logger'] as const satisfies ReadonlyArray<
  keyof AgentDeps
>
const RETRY_KEYS = ['maxRetries', 'initialDelayMs', 'maxDelayMs'] as const
const WRITE_RETRY_KEYS = ['maxAttempts', 'initialDelayMs', 'maxDelayMs'] as const
const CREATE_SESSION_KEYS = [
  'model',
  'systemPrompt',
  'summary',
  'metadata',
  'tools',
  'cwd',
  'compaction',
] as const satisfies ReadonlyArray<keyof CreateSessionOptions>

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
  integer(value.checkpointIntervalMs, 'checkpointIntervalMs', 0)
  integer(value.leaseTtlMs, 'leaseTtlMs', 1)
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
    integer(value.retention.intervalMs, 'retention.intervalMs', 1)
    if (value.retention.states !== undefined && !Array.isArray(value.retention.states)) {
      throw configError('retention.states must be an array of session states.')
    }
  }
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
  if (value.knowledge !== undefined) validateKnowledge(value.knowledge, configError)
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
}

/** Checks the options of `agent.createSession`; bad input is a {@link ValidationError}. */
export function validateCreateSessionOptions(options: unknown): asserts options is CreateSessionOptions {
  if (!isPlainObject(options))
    throw validationError(`createSession options must be an object, got ${describe(options)}.`)
  rejectUnknownKeys(options, CREATE_SESSION_KEYS, 'createSession option', validationError)
  const value = options as Record<string, unknown>
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

function integer(value: unknown, name: string, min: number): void {
  if (value !== undefined && (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)) {
    throw configError(`${name} must be an integer >= ${min}, got ${describe(value)}.`)
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
