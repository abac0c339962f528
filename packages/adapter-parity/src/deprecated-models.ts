import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** A model id that an installed provider SDK lists as deprecated, and where that list lives. */
export interface DeprecatedModel {
  readonly model: string
  /** The SDK package and version whose list names it. */
  readonly source: string
}

const PACKAGES = fileURLToPath(new URL('../../', import.meta.url))

/** The folder and version of `name` as the adapter package `adapter` resolves it (the copy it runs with). */
function packageFolder(name: string, adapter: string): { folder: string; version: string } {
  const require = createRequire(join(PACKAGES, adapter, 'package.json'))
  let folder = dirname(require.resolve(name))
  while (!existsSync(join(folder, 'package.json')) || readName(folder) !== name) {
    const parent = dirname(folder)
    if (parent === folder) throw new Error(`${name}: package.json not found from ${adapter}`)
    folder = parent
  }
  const { version } = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { version: string }
  return { folder, version }
}

function readName(folder: string): unknown {
  return (JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { name?: unknown }).name
}

/**
 * The models `@anthropic-ai/sdk` warns about on every request: the keys of its `DEPRECATED_MODELS`
 * table in `resources/messages/messages.js`, read from the installed copy.
 *
 * @throws when the table cannot be found (a new SDK layout: the check must be updated, not skipped).
 */
export function anthropicDeprecatedModels(): DeprecatedModel[] {
  const { folder, version } = packageFolder('@anthropic-ai/sdk', 'adapter-claude')
  const source = readFileSync(join(folder, 'resources', 'messages', 'messages.js'), 'utf8')
  const table = /const DEPRECATED_MODELS = \{([^}]*)\}/.exec(source)?.[1]
  if (table === undefined) throw new Error(`@anthropic-ai/sdk ${version}: no DEPRECATED_MODELS table found`)
  return [...table.matchAll(/['"]([^'"]+)['"]\s*:/g)].map((match) => ({
    model: match[1] as string,
    source: `@anthropic-ai/sdk ${version}`,
  }))
}

/**
 * The models the `openai` SDK documents as deprecated: the quoted ids of the "Deprecated values"
 * block of its `ChatModel` type in `resources/shared.d.ts`, read from the installed copy.
 *
 * @throws when the block cannot be found.
 */
export function openAIDeprecatedModels(): DeprecatedModel[] {
  const { folder, version } = packageFolder('openai', 'adapter-openai')
  const source = readFileSync(join(folder, 'resources', 'shared.d.ts'), 'utf8')
  const block = /\/\*\*\s*\n\s*\* Deprecated values:([\s\S]*?)\*\//.exec(source)?.[1]
  if (block === undefined) throw new Error(`openai ${version}: no "Deprecated values" block found`)
  return [...block.matchAll(/"([^"\s]+)"/g)].map((match) => ({
    model: match[1] as string,
    source: `openai ${version}`,
  }))
}
