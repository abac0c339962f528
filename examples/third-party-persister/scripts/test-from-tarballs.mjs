// Runs this example's tests against @agentx/core and @agentx/contract-tests installed the way a
// third party gets them: packed into tarballs and installed with npm into a fresh project outside
// the workspace, with no workspace link. Proof that the kit works from the outside.
//
// Needs both packages built (`pnpm turbo run build --filter=@agentx/contract-tests`; turbo's
// `^build` does it for `pnpm test`). The kit's one dependency besides core (fast-check) comes from
// the npm cache when it is there, else from the registry.
// Exits with the test run's status; set KEEP_TARBALL_PROJECT=1 to keep the temporary project.
import { spawnSync } from 'node:child_process'
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const example = fileURLToPath(new URL('..', import.meta.url))
const repository = resolve(example, '..', '..')
const kit = [
  { name: '@agentx/core', folder: join(repository, 'packages', 'core') },
  { name: '@agentx/contract-tests', folder: join(repository, 'packages', 'contract-tests') },
]

for (const { name, folder } of kit) {
  if (!existsSync(join(folder, 'dist', 'index.js'))) {
    console.error(`test-from-tarballs: ${name} is not built (no dist/index.js in ${folder}).`)
    console.error(`Run: pnpm turbo run build --filter=${name}`)
    process.exit(1)
  }
}

const temporary = mkdtempSync(join(tmpdir(), 'agentx-third-party-'))
let status = 1
try {
  const tarballs = join(temporary, 'tarballs')
  mkdirSync(tarballs)
  for (const { name, folder } of kit) {
    run('pnpm', ['pack', '--pack-destination', tarballs], folder, `pnpm pack of ${name}`)
  }
  const packed = readdirSync(tarballs)
    .filter((file) => file.endsWith('.tgz'))
    .map((file) => join(tarballs, file))
  if (packed.length !== kit.length)
    fail(`expected ${kit.length} tarballs in ${tarballs}, found ${packed.length}`)

  const project = join(temporary, 'project')
  mkdirSync(project)
  writeFileSync(
    join(project, 'package.json'),
    `${JSON.stringify({ name: 'agentx-third-party-check', private: true, type: 'module' }, null, 2)}\n`,
  )
  run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...packed],
    project,
    'npm install',
  )
  for (const { name } of kit) {
    const installed = join(project, 'node_modules', ...name.split('/'))
    if (lstatSync(installed).isSymbolicLink()) fail(`${name} was linked, not installed from its tarball`)
    // The MIT licence asks for its text to ship with the code.
    for (const file of ['LICENSE', 'README.md'])
      if (!existsSync(join(installed, file))) fail(`${name}'s tarball has no ${file}`)
    const { version } = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'))
    console.log(`installed ${name}@${version} from its tarball into ${project}`)
  }

  cpSync(join(example, 'src'), join(project, 'src'), { recursive: true })
  cpSync(join(example, 'test'), join(project, 'test'), { recursive: true })
  // The contract suite has a pattern of its own (`*.contract.node.js`), the plain tests `*.test.js`.
  const tests = readdirSync(join(project, 'test'))
    .filter((file) => file.endsWith('.test.js') || file.endsWith('.contract.node.js'))
    .map((file) => join('test', file))
  if (!tests.some((file) => file.endsWith('.contract.node.js'))) fail('no contract suite in test/')
  const result = spawnSync(process.execPath, ['--test', ...tests], { cwd: project, stdio: 'inherit' })
  status = result.status ?? 1
} catch (error) {
  console.error(`test-from-tarballs: ${error instanceof Error ? error.message : String(error)}`)
} finally {
  if (process.env.KEEP_TARBALL_PROJECT === '1') console.log(`kept ${temporary}`)
  else rmSync(temporary, { recursive: true, force: true })
}
process.exit(status)

/**
 * Runs a command; its failure stops the check with the command's output.
 * @param {string} command
 * @param {string[]} args
 * @param {string} cwd
 * @param {string} what
 */
function run(command, args, cwd, what) {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', shell: process.platform === 'win32' })
  if (result.status !== 0) {
    fail(
      `${what} failed (${result.error?.message ?? `exit ${result.status}`}):\n${result.stdout ?? ''}${result.stderr ?? ''}`,
    )
  }
}

/**
 * Stops the check; the temporary project is still removed.
 * @param {string} message
 * @returns {never}
 */
function fail(message) {
  throw new Error(message)
}
