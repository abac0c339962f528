import { readFile, stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { AgentError } from '../errors/agent-error.js'
import { ConfigurationError } from '../errors/configuration-error.js'
import { describe, isPlainObject, rejectUnknownKeys } from '../session/validate-input.js'

/**
 * One entry of `AgentConfig.knowledge`: a file path (relative to `workspace`; its section is named
 * after the path as written) or a named text given inline.
 */
export type KnowledgeEntry = string | { name: string; text: string }

/** A knowledge section as it is appended to the system prompt. */
export interface KnowledgeSection {
  name: string
  text: string
}

/** The most knowledge an agent may carry, all sections together, in bytes of UTF-8: 1 MB (1,048,576 bytes). */
export const KNOWLEDGE_LIMIT_BYTES = 1_048_576

/**
 * Reads the knowledge of an agent (DESIGN §10.4), in the order given: files relative to
 * `workspace`, and inline `{ name, text }` entries as they are. Called once by `initialize()`.
 *
 * @throws {ConfigurationError} naming the entry when a file is missing, is not a regular file, is
 * not UTF-8 text or cannot be read, or when the sections together pass {@link KNOWLEDGE_LIMIT_BYTES}.
 */
export async function loadKnowledge(
  entries: readonly KnowledgeEntry[],
  workspace: string,
): Promise<KnowledgeSection[]> {
  const sections: KnowledgeSection[] = []
  let total = 0
  const count = (name: string, bytes: number): void => {
    total += bytes
    if (total > KNOWLEDGE_LIMIT_BYTES) {
      throw new ConfigurationError(
        `Knowledge is limited to 1 MB (${KNOWLEDGE_LIMIT_BYTES} bytes) in total; '${name}' brings it to ${total} bytes. Shorten or drop knowledge entries.`,
      )
    }
  }
  for (const entry of entries) {
    if (typeof entry !== 'string') {
      count(entry.name, Buffer.byteLength(entry.text, 'utf8'))
      sections.push({ name: entry.name, text: entry.text })
      continue
    }
    const path = resolve(workspace, entry)
    const unreadable = (reason: string, cause?: unknown): ConfigurationError =>
      new ConfigurationError(
        `Knowledge file '${entry}' ${reason} (looked for ${path}; paths are relative to the agent's workspace).`,
        { cause },
      )
    let size: number
    try {
      const info = await stat(path)
      if (!info.isFile()) throw unreadable('is not a file')
      size = info.size
    } catch (error) {
      if (error instanceof ConfigurationError) throw error
      const code = (error as { code?: unknown }).code
      throw unreadable(
        code === 'ENOENT' ? 'does not exist' : `cannot be read: ${String(code ?? error)}`,
        error,
      )
    }
    // Checked before reading, so a huge file is never loaded into memory.
    count(entry, size)
    let bytes: Uint8Array
    try {
      bytes = await readFile(path)
    } catch (error) {
      throw unreadable(`cannot be read: ${String((error as { code?: unknown }).code ?? error)}`, error)
    }
    let text: string
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes)
    } catch (error) {
      throw unreadable('is not UTF-8 text', error)
    }
    sections.push({ name: entry, text })
  }
  return sections
}

/**
 * The knowledge sections as one block of the system prompt: each section wrapped in
 * `<knowledge name="…">` … `</knowledge>`, separated by blank lines. `undefined` for none.
 */
export function renderKnowledge(sections: readonly KnowledgeSection[]): string | undefined {
  if (sections.length === 0) return undefined
  return sections
    .map(
      ({ name, text }) =>
        // A closing tag inside the text would end the section early (and let the rest pose as
        // something else): it is written `<\/knowledge` instead.
        `<knowledge name="${name.replaceAll('"', '&quot;')}">\n${text.replace(/<\/knowledge/gi, '<\\/knowledge')}\n</knowledge>`,
    )
    .join('\n\n')
}

/** The system prompt of a request: the prompt, then the rendered knowledge after a blank line. */
export function withKnowledge(
  systemPrompt: string | undefined,
  knowledge: string | undefined,
): string | undefined {
  if (knowledge === undefined) return systemPrompt
  if (systemPrompt === undefined || systemPrompt === '') return knowledge
  return `${systemPrompt}\n\n${knowledge}`
}

/**
 * Checks `knowledge` as `createAgent` gets it (no I/O): an array of non-empty paths and
 * `{ name, text }` objects with distinct section names; throws what `error` makes.
 */
export function validateKnowledge(
  value: unknown,
  name: string,
  error: (message: string) => AgentError,
): asserts value is KnowledgeEntry[] {
  if (!Array.isArray(value)) {
    throw error(`${name} must be an array of file paths and { name, text } objects, got ${describe(value)}.`)
  }
  const names = new Set<string>()
  value.forEach((entry: unknown, index) => {
    const at = `${name}[${index}]`
    let section: string
    if (typeof entry === 'string') {
      if (entry === '') throw error(`${at} must be a non-empty file path.`)
      section = entry
    } else if (isPlainObject(entry)) {
      rejectUnknownKeys(entry, ['name', 'text'], `${at} key`, error)
      if (typeof entry.name !== 'string' || entry.name === '') {
        throw error(`${at}.name must be a non-empty string, got ${describe(entry.name)}.`)
      }
      if (typeof entry.text !== 'string')
        throw error(`${at}.text must be a string, got ${describe(entry.text)}.`)
      section = entry.name
    } else {
      throw error(`${at} must be a file path or { name, text }, got ${describe(entry)}.`)
    }
    if (names.has(section)) throw error(`${at}: a knowledge section named '${section}' is given twice.`)
    names.add(section)
  })
}
