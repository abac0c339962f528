import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DEFAULT_CLAUDE_MODEL } from '@agentx/adapter-claude'
import { DEFAULT_GEMINI_MODEL } from '@agentx/adapter-gemini'
import { describe, expect, it } from 'vitest'
import {
  anthropicDeprecatedModels,
  type DeprecatedModel,
  openAIDeprecatedModels,
} from './deprecated-models.js'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
// Changesets and changelogs are history: they may name the model a release moved away from.
const SKIPPED_FOLDERS = new Set([
  '.changeset',
  'node_modules',
  'dist',
  '.git',
  '.turbo',
  '__fixtures__',
  'test-output',
  '.agentx',
])

/**
 * Every file in which a model name is advice to a reader or a default: READMEs and other docs,
 * examples, and the sources of packages and apps (TSDoc, default values). Tests, recorded
 * fixtures, changesets and changelogs (history) are left out.
 */
function filesThatNameModels(): string[] {
  const files: string[] = []
  const visit = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name)
      if (entry.isDirectory()) {
        if (!SKIPPED_FOLDERS.has(entry.name)) visit(path)
        continue
      }
      const name = entry.name
      if (name === 'CHANGELOG.md' || name === 'pnpm-lock.yaml') continue
      if (/\.test\.ts$|\.test-d\.ts$|\.test\.js$/.test(name)) continue
      if (/\.(md|ts|mts|js|mjs|html)$/.test(name)) files.push(path)
    }
  }
  visit(ROOT)
  return files
}

/** `model` as a whole id: `gpt-5` matches neither `gpt-5.5` nor `gpt-5-mini`. */
function mentions(text: string, model: string): boolean {
  const escaped = model.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return new RegExp(`(?<![\\w.-])${escaped}(?![\\w-]|\\.\\d)`).test(text)
}

describe('model names in docs, examples, TSDoc and defaults', () => {
  const deprecated: DeprecatedModel[] = [...anthropicDeprecatedModels(), ...openAIDeprecatedModels()]
  const files = filesThatNameModels()

  it('reads the deprecation lists of the installed SDKs', () => {
    expect(deprecated.filter((entry) => entry.source.startsWith('@anthropic-ai/sdk')).length).toBeGreaterThan(
      0,
    )
    expect(deprecated.filter((entry) => entry.source.startsWith('openai')).length).toBeGreaterThan(0)
    expect(files.some((file) => relative(ROOT, file) === 'README.md')).toBe(true)
    expect(
      files.some(
        (file) => relative(ROOT, file) === join('packages', 'core', 'src', 'agent', 'create-agent.ts'),
      ),
    ).toBe(true)
  })

  it('names no model that an installed SDK lists as deprecated', () => {
    const found: string[] = []
    for (const file of files) {
      const text = readFileSync(file, 'utf8')
      for (const { model, source } of deprecated) {
        if (mentions(text, model)) found.push(`${relative(ROOT, file)}: ${model} (deprecated in ${source})`)
      }
    }
    expect(found).toEqual([])
  })

  it('uses the adapters’ default models in the quick starts, so that docs and defaults agree', () => {
    expect(deprecated.map((entry) => entry.model)).not.toContain(DEFAULT_CLAUDE_MODEL)
    for (const file of ['README.md', 'packages/core/README.md', 'packages/adapter-claude/README.md']) {
      // The first model a reader meets is the quick start's; later examples may pick others.
      const first = /claude-[a-z]+-[\w.-]+/.exec(readFileSync(join(ROOT, file), 'utf8'))?.[0]
      expect(first, file).toBe(DEFAULT_CLAUDE_MODEL)
    }
    const createAgent = readFileSync(join(ROOT, 'packages/core/src/agent/create-agent.ts'), 'utf8')
    expect(createAgent).toContain(`model: '${DEFAULT_CLAUDE_MODEL}'`)
    expect(readFileSync(join(ROOT, 'packages/adapter-gemini/README.md'), 'utf8')).toContain(
      `'${DEFAULT_GEMINI_MODEL}'`,
    )
  })
})
