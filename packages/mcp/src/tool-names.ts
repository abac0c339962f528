import { createHash } from 'node:crypto'

/** The longest tool name every provider accepts (Anthropic and OpenAI allow 64). */
export const MAX_TOOL_NAME_LENGTH = 64

/**
 * AgentX tool names for MCP tool names: `namePrefix + name`, with every character providers
 * reject (anything but `A–Z a–z 0–9 _ -`) replaced by `_` and a `_` put before a first character
 * that is not a letter or `_`, names over 64 characters shortened with a
 * hash suffix, and names that collide after that made unique with `_2`, `_3`… (in list order).
 * Returns the names in the order given.
 */
export function toToolNames(mcpNames: readonly string[], namePrefix: string): string[] {
  const used = new Set<string>()
  return mcpNames.map((mcpName) => {
    const safe = `${namePrefix}${mcpName}`.replace(/[^A-Za-z0-9_-]/g, '_')
    // Gemini wants a letter or _ first.
    const base = shorten(/^[A-Za-z_]/.test(safe) ? safe : `_${safe}`, mcpName)
    let name = base
    for (let n = 2; used.has(name); n++) name = shorten(`${base}_${n}`, `${mcpName}#${n}`)
    used.add(name)
    return name
  })
}

function shorten(name: string, seed: string): string {
  if (name.length <= MAX_TOOL_NAME_LENGTH) return name
  const hash = createHash('sha256').update(seed).digest('hex').slice(0, 8)
  return `${name.slice(0, MAX_TOOL_NAME_LENGTH - 9)}_${hash}`
}
