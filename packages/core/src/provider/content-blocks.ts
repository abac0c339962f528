import type { ContentBlock, ImageBlock } from '../contracts/messages.js'

/**
 * The text of the text blocks of `content`, joined by a line break; a string is returned as is.
 * Other blocks (images, tool calls, thinking) contribute nothing.
 *
 * Used by adapters wherever a provider takes plain text (a `system` message, a tool result that
 * the API wants as a string).
 */
export function textOf(content: string | readonly ContentBlock[]): string {
  if (typeof content === 'string') return content
  let text: string | undefined
  for (const block of content) {
    if (block.type !== 'text') continue
    text = text === undefined ? block.text : `${text}\n${block.text}`
  }
  return text ?? ''
}

/** The content of a message as blocks: a string becomes one text block (none when empty). */
export function blocksOf(content: string | readonly ContentBlock[]): readonly ContentBlock[] {
  if (typeof content !== 'string') return content
  return content === '' ? [] : [{ type: 'text', text: content }]
}

/** A base64 `data:` URL taken apart. */
export interface DataUrl {
  mediaType: string
  /** The base64 payload. */
  data: string
}

/** Takes a base64 `data:` URL apart (`data:image/png;base64,…`); `undefined` for any other URL. */
export function parseDataUrl(url: string): DataUrl | undefined {
  if (!url.startsWith('data:')) return undefined
  const match = /^data:([^;,]*)(?:;[^,]*)?;base64,(.*)$/s.exec(url)
  if (match === null) return undefined
  return { mediaType: match[1] ?? '', data: match[2] ?? '' }
}

/** The URL of an image block: its `url`, or a `data:` URL made of its base64 `data`. */
export function imageUrlOf(block: ImageBlock): string {
  if (block.url !== undefined && block.url !== '') return block.url
  return `data:${block.mediaType};base64,${block.data ?? ''}`
}

/** The parsed input of a tool call, or the raw text when it is not valid JSON. */
export type ParsedToolInput = { ok: true; input: unknown } | { ok: false; input: string }

/**
 * Parses the JSON arguments of a tool call (assembled from stream fragments): empty or blank text
 * is `{}`; text that is not valid JSON is kept as the raw string (the tool sees exactly what the
 * model wrote) and never throws.
 */
export function parseToolInput(text: string): ParsedToolInput {
  if (text.trim() === '') return { ok: true, input: {} }
  try {
    return { ok: true, input: JSON.parse(text) as unknown }
  } catch {
    return { ok: false, input: text }
  }
}

/**
 * A tool call's input as the JSON object providers require on the wire: an object as is,
 * `undefined`/`null` as `{}`, a string holding a JSON object parsed, anything else wrapped as
 * `{ value: input }` so that nothing is lost.
 */
export function toolInputObject(input: unknown): Record<string, unknown> {
  if (input === undefined || input === null) return {}
  if (typeof input === 'object' && !Array.isArray(input)) return input as Record<string, unknown>
  if (typeof input === 'string') {
    const parsed = parseToolInput(input)
    if (
      parsed.ok &&
      typeof parsed.input === 'object' &&
      parsed.input !== null &&
      !Array.isArray(parsed.input)
    )
      return parsed.input as Record<string, unknown>
  }
  return { value: input }
}
