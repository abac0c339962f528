/** The parsed arguments of a function call, or the raw text when they are not valid JSON. */
export type ParsedToolArguments = { ok: true; input: unknown } | { ok: false; input: string }

/**
 * Parses the JSON arguments of a function call assembled from stream fragments.
 *
 * Empty (or whitespace-only) arguments are `{}` (rule A-TOOL-004). Invalid JSON never throws
 * (rule A-TOOL-003): the call keeps the raw text as its input, and the adapter records the raw text
 * in `providerMetadata.openai.rawArguments` so it is sent back unchanged.
 */
export function parseToolArguments(text: string): ParsedToolArguments {
  if (text.trim() === '') return { ok: true, input: {} }
  try {
    return { ok: true, input: JSON.parse(text) as unknown }
  } catch {
    return { ok: false, input: text }
  }
}
