import type { RuleCatalogue } from '../engine/render-contract-docs.js'
import { adapterRules } from './adapter/index.js'
import { persisterRules } from './persister/index.js'

/** Every rule set of the kit, in documentation order: persister rules, then adapter rules. */
export function contractCatalogues(): RuleCatalogue[] {
  return [
    { title: 'Persister rules', rules: persisterRules as RuleCatalogue['rules'] },
    { title: 'Adapter rules', rules: adapterRules as RuleCatalogue['rules'] },
  ]
}

/** The names of the wire dialects an entry module exports (`…Dialect`), in a stable order. */
export function dialectNames(entry: Record<string, unknown>): string[] {
  return Object.keys(entry)
    .filter((name) => name.endsWith('Dialect') && typeof entry[name] === 'object')
    .sort()
}
