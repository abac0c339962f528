import { ValidationError } from '../errors/validation-error.js'
import type { ProviderIdentity } from './provider-identity.js'
import { redactSecrets } from './redact-secrets.js'

/** The idle timeout of every first-party adapter when none is given: 60 s without a byte. */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000

/**
 * The error for an option value that can never work, from the constructor or from a send:
 * a {@link ValidationError} whose message names the option, the provider and what was expected.
 *
 * @example
 * throw invalidOption(identity, 'idleTimeoutMs', 'a positive number of milliseconds or Infinity', -1)
 * // ValidationError: Invalid idleTimeoutMs for the Claude adapter (provider 'claude'): expected a positive …, got -1.
 */
export function invalidOption(
  provider: ProviderIdentity,
  option: string,
  expected: string,
  value: unknown,
): ValidationError {
  return new ValidationError(
    `Invalid ${option} for the ${provider.label} adapter (provider '${provider.name}'): expected ${expected}, got ${describeValue(value, provider)}.`,
  )
}

/**
 * The error for an option the provider does not accept in this configuration (a request field
 * its API version removed, a mode the adapter cannot handle): a {@link ValidationError} thrown
 * before any request, naming the option and the provider, and saying what to do instead.
 */
export function unsupportedOption(
  provider: ProviderIdentity,
  option: string,
  reason: string,
): ValidationError {
  return new ValidationError(
    `${option} is not supported by the ${provider.label} adapter (provider '${provider.name}'): ${reason}`,
  )
}

/**
 * Reads `idleTimeoutMs` the one way every adapter does: absent → {@link DEFAULT_IDLE_TIMEOUT_MS};
 * a positive number of milliseconds, or `Infinity` to disable it; anything else →
 * {@link invalidOption}.
 */
export function readIdleTimeoutMs(provider: ProviderIdentity, value: unknown): number {
  if (value === undefined) return DEFAULT_IDLE_TIMEOUT_MS
  if (typeof value !== 'number' || Number.isNaN(value) || value <= 0)
    throw invalidOption(provider, 'idleTimeoutMs', 'a positive number of milliseconds or Infinity', value)
  return value
}

/**
 * Reads this provider's entry of a send's `providerOptions` (`providerOptions[provider.name]`):
 * absent → `{}`; a plain object → it, after checking that it sets none of `reserved` (the
 * request fields the adapter owns); anything else → {@link invalidOption}. Thrown before any
 * request, the same way by every adapter.
 */
export function readProviderOptions(
  provider: ProviderIdentity,
  providerOptions: unknown,
  reserved: readonly string[] = [],
): Record<string, unknown> {
  if (providerOptions === undefined) return {}
  if (!isPlainObject(providerOptions))
    throw invalidOption(provider, 'providerOptions', 'an object keyed by provider name', providerOptions)
  const value = providerOptions[provider.name]
  if (value === undefined) return {}
  if (!isPlainObject(value))
    throw invalidOption(provider, `providerOptions.${provider.name}`, 'an object of request fields', value)
  for (const field of reserved) {
    if (Object.hasOwn(value, field))
      throw new ValidationError(
        `providerOptions.${provider.name}.${field} cannot be set for the ${provider.label} adapter (provider '${provider.name}'): the adapter sends it itself; use the send options instead.`,
      )
  }
  return value
}

/**
 * Reads an optional non-empty string option (a model, an API version): absent → `undefined`,
 * else it must be a non-empty string ({@link invalidOption} otherwise).
 */
export function readStringOption(
  provider: ProviderIdentity,
  option: string,
  value: unknown,
): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string' || value.trim() === '')
    throw invalidOption(provider, option, 'a non-empty string', value)
  return value
}

/**
 * Checks the generic request options of a send the one way every adapter does, before any
 * request: `maxOutputTokens` a positive integer, `temperature` a finite number ≥ 0, `output`
 * (structured output) an object with a non-empty `name` and a JSON Schema object as `schema`
 * (each may be absent). Anything else → {@link invalidOption}.
 */
export function checkSendOptions(
  provider: ProviderIdentity,
  options: { maxOutputTokens?: unknown; temperature?: unknown; output?: unknown; tools?: unknown },
  rules: { toolName?: ToolNameRule } = {},
): void {
  if (rules.toolName !== undefined) checkToolNames(provider, options.tools, rules.toolName)
  readPositiveInteger(provider, 'maxOutputTokens', options.maxOutputTokens)
  const temperature = options.temperature
  if (
    temperature !== undefined &&
    (typeof temperature !== 'number' || !Number.isFinite(temperature) || temperature < 0)
  )
    throw invalidOption(provider, 'temperature', 'a finite number of at least 0', temperature)
  const output = options.output
  if (
    output !== undefined &&
    (!isObject(output) || !isObject(output.schema) || typeof output.name !== 'string' || output.name === '')
  )
    throw invalidOption(
      provider,
      'output',
      'an object { name, schema } with a JSON Schema object as schema',
      output,
    )
}

/** What a provider's API accepts as a tool name, and how to say it in an error ("1–64 letters, …"). */
export interface ToolNameRule {
  pattern: RegExp
  description: string
}

/**
 * Refuses a tool whose name the provider's API would refuse (with an HTTP 400, after the kernel
 * stored the user message): a {@link ValidationError} naming the tool and the rule, before any
 * request. Called by {@link checkSendOptions} with the adapter's rule.
 */
export function checkToolNames(provider: ProviderIdentity, tools: unknown, rule: ToolNameRule): void {
  if (!Array.isArray(tools)) return
  for (const tool of tools as Array<{ name?: unknown } | null>) {
    const name = tool?.name
    if (typeof name !== 'string' || rule.pattern.test(name)) continue
    const shown = name.length > 80 ? `${name.slice(0, 80)}…' (${name.length} characters)` : `${name}'`
    throw new ValidationError(
      `The tool name '${shown} is not accepted by the ${provider.label} API (provider '${provider.name}'): a tool name must be ${rule.description}.`,
    )
  }
}

/**
 * The error for a `providerOptions` field that sets the provider's structured output while the
 * send's `output` asks for one too (`output_config.format`, `text.format`, `response_format`,
 * `responseJsonSchema` …): a {@link ValidationError} thrown before any request, naming the field
 * and the provider. `field` is the path under `providerOptions.<provider>`.
 */
export function conflictingOutputOption(provider: ProviderIdentity, field: string): ValidationError {
  return new ValidationError(
    `providerOptions.${provider.name}.${field} cannot be set together with output for the ${provider.label} adapter (provider '${provider.name}'): the adapter sends it for output; leave one of them out.`,
  )
}

/** Reads an optional positive-integer option (a token limit): absent → `undefined`, else {@link invalidOption} unless it is one. */
export function readPositiveInteger(
  provider: ProviderIdentity,
  option: string,
  value: unknown,
): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0)
    throw invalidOption(provider, option, 'a positive integer', value)
  return value
}

/**
 * Resolves a base URL: the `option` value, else the environment variable `envName`, else
 * `undefined` (the SDK's default). Either must be an absolute `http(s)` URL; a bad value throws
 * {@link invalidOption} naming where it came from (the option or the variable).
 */
export function readBaseUrl(
  provider: ProviderIdentity,
  option: string,
  value: unknown,
  envName: string,
): string | undefined {
  const fromOption = value !== undefined
  const url = fromOption ? value : readEnv(envName)
  if (url === undefined) return undefined
  if (typeof url !== 'string' || !isHttpUrl(url))
    throw invalidOption(provider, fromOption ? option : envName, 'an absolute http(s) URL', url)
  return url
}

/** A trimmed environment variable, `undefined` when unset or blank (and outside Node). */
export function readEnv(name: string): string | undefined {
  const value = typeof process === 'undefined' ? undefined : process.env?.[name]?.trim()
  return value === undefined || value === '' ? undefined : value
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text)
    return url.protocol === 'http:' || url.protocol === 'https:'
  } catch {
    return false
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

function describeValue(value: unknown, provider: ProviderIdentity): string {
  if (typeof value === 'string') {
    const shown = value.length > 80 ? `${value.slice(0, 80)}…` : value
    return JSON.stringify(redactSecrets(shown, provider.secrets ?? []))
  }
  if (Array.isArray(value)) return 'an array'
  if (value === null) return 'null'
  if (typeof value === 'object') return 'an object'
  if (typeof value === 'function') return 'a function'
  return String(value)
}
