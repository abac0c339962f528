// Regenerates docs/contract-tests.md from the rule registry (run `pnpm --filter @agentx/contract-tests docs`,
// which builds dist first). test/contract-docs.test.ts fails when the committed file differs.
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import * as kit from '../dist/index.js'

const target = fileURLToPath(new URL('../../../docs/contract-tests.md', import.meta.url))
writeFileSync(target, kit.renderContractDocs(kit.contractCatalogues(), kit.dialectNames(kit)))
console.log(`wrote ${target}`)
