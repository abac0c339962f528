const AGENT_ERROR = Symbol.for('agentx.error')

/** Options every {@link AgentError} takes. */
export interface AgentErrorOptions {
  /** The underlying error (a driver's or an SDK's). */
  cause?: unknown
  /** Whether trying the same thing again may succeed. Default is the class's own default. */
  retryable?: boolean
}

/**
 * The base of every error AgentX throws: a stable string `code`, `retryable`, and `cause`.
 *
 * Recognise one with {@link isAgentError}, which also works across duplicate copies of this package.
 */
export class AgentError extends Error {
  override name = 'AgentError'
  /** A stable, machine-readable code, e.g. `SESSION_BUSY`, `NOT_FOUND`, `VALIDATION`. */
  readonly code: string
  /** Whether trying the same thing again may succeed. */
  readonly retryable: boolean
  declare readonly cause?: unknown

  constructor(message: string, code: string, options: AgentErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.retryable = options.retryable ?? false
    Object.defineProperty(this, AGENT_ERROR, { value: true })
  }

  /** A JSON-safe view (name, code, message, retryable) for logs and wire formats. */
  toJSON(): Record<string, unknown> {
    return { name: this.name, code: this.code, message: this.message, retryable: this.retryable }
  }
}

/** Whether `value` is an {@link AgentError}, from this or any other copy of `@agentx/core`. */
export function isAgentError(value: unknown): value is AgentError {
  return (
    typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[AGENT_ERROR] === true
  )
}
