import type { ContractRule } from './rule.js'

/** One rule set for {@link renderContractDocs}. */
export interface RuleCatalogue {
  /** Heading, e.g. `Persister rules`. */
  readonly title: string
  readonly rules: readonly ContractRule<never, string>[]
}

const INTRO = `# Contract tests

<!-- Generated from the rule registry of @agentx/contract-tests by \`pnpm --filter @agentx/contract-tests docs\`. Do not edit by hand: a test fails when this file is stale. -->

\`@agentx/contract-tests\` is the compliance kit for AgentX plugins. Every rule has a stable id
(\`P-…\` for persisters, \`A-…\` for adapters, never reused), a level and a title; the test name of a
rule is \`<id> [<level>] <title>\`, and a failure message carries the rule id, what was expected,
what was seen and a hint.

- **MUST** rules define compliance: a failing MUST rule (or one listed in \`expectedFailures\`) is a gap.
- **SHOULD** rules are strong advice; a failure still fails the test run unless it is listed in
  \`expectedFailures\`.
- Rules that need a **capability** the implementation does not declare are skipped, with the
  reason in the test name and in the report.
- **\`expectedFailures\`** lists known gaps. Those rules still run and must fail; one that starts
  passing fails the run ("expected failure now passes: remove it"), so the list never goes stale.

The engine is runner-agnostic: rules import no test runner. Bindings register them as a vitest
suite (\`@agentx/contract-tests/vitest\`) or a \`node:test\` suite (\`@agentx/contract-tests/node-test\`);
the runner is an optional peer dependency. \`runContract(rules, options, createContext)\` from the
main entry runs rules without any runner and returns the JSON report.

## Use it in ten lines

A persister (\`my-persister.contract.test.ts\`):

\`\`\`ts
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describePersisterContract } from '@agentx/contract-tests/vitest'
import { MyPersister } from './my-persister.js'

const folder = mkdtempSync(join(tmpdir(), 'my-persister-'))
const fileOf = (store: { key: string }) => join(folder, \`\${store.key}.db\`)
describePersisterContract({
  name: 'MyPersister',
  create: (store) => new MyPersister({ filename: fileOf(store) }),  // a new, empty store
  reopen: (store) => new MyPersister({ filename: fileOf(store) }),  // the same store again
  capabilities: ['durable', 'userScoping', 'leases', 'retention'],
})
\`\`\`

The kit closes a persister before it calls \`reopen(store)\` and gives it no reference to the old
instance: the data must come from storage. With \`freshProcess: { module }\` (a module exporting
that \`reopen\`), P-LIF-008 also reads the store in a new \`node\` process. With
\`migration: { createPreviousStore(store) }\` the optional P-MIG rules open a store written by your
previous release (\`writePreviousReleaseData\` fills one with the kit's data set).

An adapter (\`my-adapter.contract.test.ts\`), against the loopback fake provider:

\`\`\`ts
import { anthropicMessagesDialect } from '@agentx/contract-tests'
import { describeAdapterContract } from '@agentx/contract-tests/vitest'
import { MyClaudeAdapter } from './my-claude-adapter.js'

describeAdapterContract({
  name: 'MyClaudeAdapter',
  dialect: anthropicMessagesDialect,                                // the provider's wire protocol
  createAdapter: ({ baseURL, apiKey, idleTimeoutMs }) =>
    new MyClaudeAdapter({ baseURL, apiKey, idleTimeoutMs, maxRetries: 0 }),
  capabilities: ['toolCalls', 'parallelToolCalls', 'thinking', 'images', 'usage', 'structuredOutput'],
})
\`\`\`

With \`node:test\`, import \`describeAdapterContract\` / \`describePersisterContract\` from
\`@agentx/contract-tests/node-test\` instead. Name those files \`*.contract.node.mjs\` and run them
with \`node --test "**/*.contract.node.mjs"\`: vitest's default pattern (\`*.test.*\`) then never picks
them up, and the explicit pattern keeps \`node --test\` away from the vitest files (its default
patterns include \`*.test.ts\` on Node 23.6+). A binding loaded by the other runner fails at once
with a message saying this.

Randomized rules (P-MSG-002, P-MSG-026, P-SES-025) compare random operation sequences with the
reference persister. They use a fixed seed, so every run is the same; a failure names the seed and
the shrunk operations. \`AGENTX_CONTRACT_SEED=<n>\` replays a seed, \`AGENTX_CONTRACT_SEED=random\` explores.

Each adapter rule gets a fresh loopback \`node:http\` server (\`startFakeProvider({ dialect })\`) that
plays abstract scenarios (text, byte-split text, thinking, tool calls, parallel interleaved tool
calls, trailing usage, HTTP errors with \`retry-after\`, error frames, cut streams, malformed frames,
stalls, held headers) in the provider's exact bytes, and records every request, open connection
and client disconnect. \`createAdapter\` receives the server's \`baseURL\`, a fresh fake \`apiKey\`
and \`idleTimeoutMs\`: the adapter must honour that idle timeout and must not retry on its own
(disable the SDK's retries). An adapter that does not speak HTTP passes \`createHarness\` instead
of \`dialect\`. Dialects shipped: DIALECTS.

## Capabilities

| Kind | Capability | Rules that need it |
| --- | --- | --- |
`

const REPORTS = `
## Conformance reports

Set \`AGENTX_CONTRACT_REPORT\` to a file path (or a directory ending in \`/\`), or
\`AGENTX_CONTRACT_REPORT_DIR\` to a directory, and each contract writes a JSON report
(\`<dir>/<kind>-<name>.json\`): one entry per rule with its status (\`passed\`, \`failed\`,
\`skipped\` with the reason, \`expected-failure\`) and a summary whose \`compliant\` is true when no
rule failed and no MUST rule is a known gap. CI reads these reports to accept skips that come from
undeclared capabilities and nothing else.
`

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ')
}

function capabilityRows(catalogues: readonly RuleCatalogue[]): string {
  const rows: string[] = []
  for (const catalogue of catalogues) {
    const kind = catalogue.title.replace(/ rules$/, '')
    const byCapability = new Map<string, string[]>()
    for (const rule of catalogue.rules) {
      for (const capability of rule.requires ?? []) {
        byCapability.set(capability, [...(byCapability.get(capability) ?? []), rule.id])
      }
    }
    for (const [capability, ids] of byCapability)
      rows.push(`| ${kind} | \`${capability}\` | ${ids.join(', ')} |`)
  }
  return `${rows.join('\n')}\n`
}

function catalogueSection(catalogue: RuleCatalogue): string {
  const must = catalogue.rules.filter((rule) => rule.level === 'MUST').length
  const lines = [
    `## ${catalogue.title}`,
    '',
    `${catalogue.rules.length} rules (${must} MUST, ${catalogue.rules.length - must} SHOULD).`,
  ]
  const groups: string[] = []
  for (const rule of catalogue.rules) if (!groups.includes(rule.group)) groups.push(rule.group)
  for (const group of groups) {
    lines.push(
      '',
      `### ${group}`,
      '',
      '| Id | Level | Rule | Needs | When it fails |',
      '| --- | --- | --- | --- | --- |',
    )
    for (const rule of catalogue.rules.filter((entry) => entry.group === group)) {
      const needs =
        [
          ...(rule.requires ?? []).map((capability) => `\`${capability}\``),
          ...(rule.requiresOption === undefined ? [] : [`option \`${rule.requiresOption}\``]),
        ].join(', ') || '—'
      lines.push(`| ${rule.id} | ${rule.level} | ${cell(rule.title)} | ${needs} | ${cell(rule.hint ?? '')} |`)
    }
  }
  return `${lines.join('\n')}\n`
}

/**
 * Renders `docs/contract-tests.md`: how to use the kit, the shipped `dialects`, the capabilities,
 * the reports, and every rule of every catalogue (id, level, title, needed capabilities, hint),
 * grouped as in the registry.
 *
 * Called by the package's `docs` script; a test compares its output with the committed file.
 */
export function renderContractDocs(
  catalogues: readonly RuleCatalogue[],
  dialects: readonly string[],
): string {
  const intro = INTRO.replace('DIALECTS', dialects.map((name) => `\`${name}\``).join(', '))
  return [
    intro + capabilityRows(catalogues),
    REPORTS,
    ...catalogues.map((catalogue) => `\n${catalogueSection(catalogue)}`),
  ].join('')
}
