import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'

const repository = fileURLToPath(new URL('../../', import.meta.url))
const turbo = JSON.parse(readFileSync(join(repository, 'turbo.json'), 'utf8'))

// turbo runs every task with a filtered environment. Tests that install packed tarballs with npm
// (examples/third-party-persister) reach the registry from inside a task: behind a proxy, or a
// TLS-intercepting one whose CA is given by NODE_EXTRA_CA_CERTS, they fail with
// SELF_SIGNED_CERT_IN_CHAIN unless these variables reach the task.
describe('task environment', () => {
  for (const name of [
    'NODE_EXTRA_CA_CERTS',
    'SSL_CERT_FILE',
    'SSL_CERT_DIR',
    'HTTP_PROXY',
    'HTTPS_PROXY',
    'NO_PROXY',
    'http_proxy',
    'https_proxy',
    'no_proxy',
    'npm_config_nodedir',
  ]) {
    it(`passes ${name} through to every task`, () => {
      assert.ok(turbo.globalPassThroughEnv.includes(name), `${name} is missing from globalPassThroughEnv`)
    })
  }
})
