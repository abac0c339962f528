import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join, relative } from 'node:path'
import { after, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'

const repository = fileURLToPath(new URL('../../', import.meta.url))
/** @param {string} path a path relative to the repository */
const read = (path) => readFileSync(join(repository, path), 'utf8')
/**
 * @param {string} folder
 * @returns {{ engines?: { node?: string }, devDependencies?: Record<string, string> }}
 */
const manifest = (folder) => JSON.parse(read(join(folder, 'package.json')))
const workspaceYaml = read('pnpm-workspace.yaml')

/** The supported range: the root's `engines.node`, `>=MAJOR.MINOR`. */
const range = manifest('.').engines?.node
const floor = /^>=(\d+)\.(\d+)$/.exec(range ?? '')
const [floorMajor, floorMinor] = floor ? [Number(floor[1]), Number(floor[2])] : [Number.NaN, Number.NaN]

/**
 * Whether an exact version `x.y.z` is inside the supported range.
 * @param {string} version
 */
function isSupported(version) {
  const [major = 0, minor = 0] = version.split('.').map(Number)
  return major > floorMajor || (major === floorMajor && minor >= floorMinor)
}

/** The folders of the workspace's packages, from the `packages:` globs of pnpm-workspace.yaml. */
function workspaceFolders() {
  const list = /^packages:\n((?:\s+- .+\n)+)/m.exec(workspaceYaml)?.[1]
  assert.ok(list, 'pnpm-workspace.yaml has a packages: list')
  /** @type {string[]} */
  const folders = []
  for (const [, pattern = ''] of list.matchAll(/^\s+- (.+)$/gm)) {
    if (pattern.endsWith('/*')) {
      const parent = pattern.slice(0, -2)
      for (const entry of readdirSync(join(repository, parent), { withFileTypes: true })) {
        if (entry.isDirectory() && existsSync(join(repository, parent, entry.name, 'package.json')))
          folders.push(join(parent, entry.name))
      }
    } else {
      folders.push(pattern)
    }
  }
  return folders
}

/**
 * Every Markdown file of the repository except changelogs and changesets (which record history).
 * @param {string} [folder]
 * @returns {string[]}
 */
function documents(folder = '.') {
  /** @type {string[]} */
  const found = []
  for (const entry of readdirSync(join(repository, folder), { withFileTypes: true })) {
    const path = join(folder, entry.name)
    if (entry.isDirectory()) {
      if (!['node_modules', '.git', '.changeset', '.turbo', 'dist'].includes(entry.name))
        found.push(...documents(path))
    } else if (entry.name.endsWith('.md') && entry.name !== 'CHANGELOG.md') {
      found.push(path)
    }
  }
  return found
}

describe('the supported Node range', () => {
  it('is a lower bound on a minor release, >=MAJOR.MINOR, in the root package.json', () => {
    assert.match(range ?? '', /^>=\d+\.\d+$/)
  })

  it('is declared identically by every package of the workspace and every example', () => {
    const folders = workspaceFolders()
    for (const parent of ['packages', 'apps', 'examples']) {
      for (const entry of readdirSync(join(repository, parent), { withFileTypes: true })) {
        if (entry.isDirectory() && existsSync(join(repository, parent, entry.name, 'package.json')))
          assert.ok(folders.includes(join(parent, entry.name)), `${parent}/${entry.name} is in the workspace`)
      }
    }
    assert.ok(folders.includes('.ci'))
    const declared = Object.fromEntries(
      ['.', ...folders].map((folder) => [folder, manifest(folder).engines?.node ?? '(none)']),
    )
    assert.deepEqual(declared, Object.fromEntries(Object.keys(declared).map((folder) => [folder, range])))
  })

  it('makes pnpm refuse to install under an older Node (engineStrict)', () => {
    assert.match(workspaceYaml, /^engineStrict: true$/m)
  })

  it('has the major of its floor in @types/node, so no newer API type-checks', () => {
    const types = /^\s+"@types\/node": \^(\d+)\./m.exec(workspaceYaml)
    assert.equal(Number(types?.[1]), floorMajor)
  })

  it('holds every Node version CI tests, one exact version per major, from the floor major on', () => {
    const line = /^node_versions=\(([^)]*)\)$/m.exec(read('.ci/run'))?.[1]
    assert.ok(line, '.ci/run declares node_versions=(…)')
    const versions = line.trim().split(/\s+/)
    for (const version of versions) {
      assert.match(version, /^\d+\.\d+\.\d+$/)
      assert.ok(isSupported(version), `${version} satisfies ${range}`)
    }
    const majors = versions.map((version) => Number(version.split('.')[0]))
    assert.equal(new Set(majors).size, majors.length, 'one version per major')
    assert.equal(Math.min(...majors), floorMajor)
    assert.deepEqual(majors, [22, 24, 26])
  })

  it('is the one stated by every README that states a Node version floor', () => {
    const statements = []
    for (const document of documents()) {
      for (const match of read(document).matchAll(/Node(?:\.js)? (?:≥|>=) ?v?(\d+(?:\.\d+)*)/g))
        statements.push(`${document}: ${match[1]}`)
    }
    assert.ok(statements.some((statement) => statement.startsWith('README.md: ')))
    assert.deepEqual(
      statements,
      statements.map((statement) => statement.replace(/: [\d.]+$/, `: ${floorMajor}.${floorMinor}`)),
    )
  })
})

describe('pnpm install under a Node outside the range', () => {
  // A workspace with the repository's root manifest and pnpm-workspace.yaml, and a `node` first on
  // PATH that reports the version under test (pnpm reads the version of the `node` on PATH).
  const scratch = mkdtempSync(join(tmpdir(), 'agentx-engines-'))
  after(() => rmSync(scratch, { recursive: true, force: true }))
  const pnpm =
    process.env.npm_execpath && /pnpm/.test(process.env.npm_execpath) ? process.env.npm_execpath : 'pnpm'

  /**
   * Runs `pnpm install --offline` in a fresh copy of the root workspace, as under Node `version`.
   * @param {string} version
   * @param {{ withDependencies: boolean }} options
   */
  function installAs(version, { withDependencies }) {
    const folder = join(scratch, `node-${version}-${withDependencies ? 'full' : 'bare'}`)
    const bin = join(folder, 'bin')
    mkdirSync(bin, { recursive: true })
    writeFileSync(join(bin, 'node'), `#!/bin/sh\necho v${version}\n`)
    chmodSync(join(bin, 'node'), 0o755)
    const root = manifest('.')
    if (!withDependencies) delete root.devDependencies
    writeFileSync(join(folder, 'package.json'), JSON.stringify(root))
    writeFileSync(join(folder, 'pnpm-workspace.yaml'), workspaceYaml)
    const run = spawnSync(pnpm, ['install', '--offline', '--no-frozen-lockfile'], {
      cwd: folder,
      encoding: 'utf8',
      env: { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH}` },
      timeout: 60_000,
    })
    return { status: run.status, output: `${run.stdout}${run.stderr}`, folder: relative(scratch, folder) }
  }

  it('fails with pnpm unsupported-engine error under the previous floor, Node 20.19', () => {
    const { status, output } = installAs('20.19.0', { withDependencies: true })
    assert.notEqual(status, 0, output)
    assert.match(output, /ERR_PNPM_UNSUPPORTED_ENGINE/)
    assert.match(output, /Unsupported engine/)
  })

  it('fails under a Node of the floor major below the floor minor', () => {
    const { status, output } = installAs(`${floorMajor}.${floorMinor - 1}.0`, { withDependencies: true })
    assert.notEqual(status, 0, output)
    assert.match(output, /ERR_PNPM_UNSUPPORTED_ENGINE/)
  })

  it('succeeds at the floor itself', () => {
    const { status, output } = installAs(`${floorMajor}.${floorMinor}.0`, { withDependencies: false })
    assert.equal(status, 0, output)
  })
})
