import type { AgentError } from '../errors/agent-error.js'
import { isRecord as isPlainObject } from '../persistence/shapes.js'
import { isStandardSchema, toJsonSchema } from './schema.js'
import type { Tool } from './tool.js'

/** Checks a list of tools: each needs a non-empty name; `inputSchema`, `execute`, `needsApproval` of their types. */
export function validateTools(
  tools: unknown,
  what: string,
  fail: (message: string) => AgentError,
): asserts tools is Tool[] {
  if (!Array.isArray(tools)) throw fail(`${what} must be an array of tools.`)
  const names = new Set<string>()
  tools.forEach((tool: unknown, index) => {
    const at = `${what}[${index}]`
    if (!isPlainObject(tool)) throw fail(`${at} must be a tool object.`)
    const value = tool as Record<string, unknown>
    if (typeof value.name !== 'string' || value.name === '')
      throw fail(`${at}.name must be a non-empty string.`)
    // Within one list a name is one tool (across lists, later ones win: send > session > config).
    if (names.has(value.name)) throw fail(`${at}.name '${value.name}' is given twice in ${what}.`)
    names.add(value.name)
    if (value.execute !== undefined && typeof value.execute !== 'function') {
      throw fail(`${at}.execute ('${value.name}') must be a function (leave it out for a client tool).`)
    }
    const approval = value.needsApproval
    if (approval !== undefined && typeof approval !== 'boolean' && typeof approval !== 'function') {
      throw fail(`${at}.needsApproval ('${value.name}') must be a boolean or a function.`)
    }
    if (isStandardSchema(value.inputSchema)) {
      try {
        toJsonSchema(value.inputSchema, `${at}.inputSchema ('${value.name}')`)
      } catch (error) {
        throw fail((error as Error).message)
      }
    } else if (!isPlainObject(value.inputSchema)) {
      throw fail(`${at}.inputSchema ('${value.name}') must be a JSON Schema object or a Standard Schema.`)
    }
    if (value.description !== undefined && typeof value.description !== 'string') {
      throw fail(`${at}.description ('${value.name}') must be a string.`)
    }
  })
}
