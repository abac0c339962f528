import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import * as kit from '../src/index.js'

const docsFile = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'docs', 'contract-tests.md')

describe('docs/contract-tests.md', () => {
  it('is what the rule registry generates (run `pnpm --filter @agentx/contract-tests docs` after changing rules)', () => {
    const expected = kit.renderContractDocs(kit.contractCatalogues(), kit.dialectNames(kit))
    expect(readFileSync(docsFile, 'utf8')).toBe(expected)
  })

  it('lists every rule of both kinds with its id, level and title', () => {
    const text = readFileSync(docsFile, 'utf8')
    const rules = [...kit.persisterRules, ...kit.adapterRules]
    expect(rules.length).toBeGreaterThan(60)
    for (const rule of rules)
      expect(text).toContain(`| ${rule.id} | ${rule.level} | ${rule.title.replace(/\|/g, '\\|')} |`)
  })

  it('names every shipped dialect', () => {
    expect(kit.dialectNames(kit)).toEqual([
      'anthropicMessagesDialect',
      'geminiDialect',
      'openAIChatDialect',
      'openAIResponsesDialect',
    ])
  })
})
