import { randomBytes } from 'node:crypto'
import type { ContentBlock } from '@agentx/core'
import type { ReceivedRequest } from './wire-dialect.js'

/** What the dialects read and write on the wire: plain JSON objects. */
export type Json = Record<string, unknown>

/** A provider-style id: `prefix` and `bytes` random bytes (base64url unless `encoding` says otherwise). */
export function randomId(prefix = '', bytes = 12, encoding: 'base64url' | 'hex' = 'base64url'): string {
  return `${prefix}${randomBytes(bytes).toString(encoding)}`
}

/** Splits text into pieces of at most `size` code points (never inside a surrogate pair). */
export function pieces(text: string, size: number | undefined): string[] {
  if (size === undefined || size <= 0) return [text]
  const characters = Array.from(text)
  const out: string[] = []
  for (let i = 0; i < characters.length; i += size) out.push(characters.slice(i, i + size).join(''))
  return out.length > 0 ? out : ['']
}

/** Round-robin over the lists, so fragments of different blocks or calls interleave. */
export function interleave<T>(lists: T[][]): T[] {
  const out: T[] = []
  const longest = Math.max(0, ...lists.map((list) => list.length))
  for (let i = 0; i < longest; i += 1) for (const list of lists) if (i < list.length) out.push(list[i] as T)
  return out
}

/** A request header's (first) value. */
export function header(request: ReceivedRequest, name: string): string | undefined {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}

/** Tool-call arguments as the model sent them: parsed JSON, the raw text when it is not JSON, `{}` when empty. */
export function parseArguments(text: unknown): unknown {
  if (typeof text !== 'string' || text.trim() === '') return {}
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
  }
}

/** An image given by URL: inline when it is a base64 `data:` URL. */
export function imageBlock(url: string): ContentBlock {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url)
  if (match) return { type: 'image', mediaType: match[1] as string, data: match[2] as string }
  return { type: 'image', mediaType: '', url }
}
