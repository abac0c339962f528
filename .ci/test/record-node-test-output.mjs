// Records what node:test prints for __fixtures__/node-test-sample.mjs under the given Node
// binaries, with the default reporter (stdout is a pipe, as in CI) and each reporter that prints
// counts, into __fixtures__/node-<version>.<reporter>.txt. check-skips.test.mjs reads them.
// The junit reporter names each test's file with its absolute path; the recording keeps it
// relative to __fixtures__ so that no machine's folder ends up in the repository.
//
// Usage: node .ci/test/record-node-test-output.mjs <path of node 22> <path of node 24> …
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const fixtures = fileURLToPath(new URL('__fixtures__/', import.meta.url))
const binaries = process.argv.slice(2)
if (binaries.length === 0) {
  console.error('usage: node .ci/test/record-node-test-output.mjs <node binary>…')
  process.exit(2)
}
const env = { ...process.env }
for (const name of ['FORCE_COLOR', 'NO_COLOR', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT']) delete env[name]

for (const binary of binaries) {
  const version = spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout.trim().replace(/^v/, '')
  for (const reporter of ['default', 'tap', 'spec', 'junit']) {
    const args = ['--test', ...(reporter === 'default' ? [] : [`--test-reporter=${reporter}`])]
    const run = spawnSync(binary, [...args, 'node-test-sample.mjs'], { cwd: fixtures, encoding: 'utf8', env })
    if (run.status !== 0) throw new Error(`node ${version} --test (${reporter}) failed:\n${run.stderr}`)
    const file = join(fixtures, `node-${version}.${reporter}.txt`)
    writeFileSync(file, run.stdout.replaceAll(fixtures, ''))
    console.log(`recorded ${file}`)
  }
}
