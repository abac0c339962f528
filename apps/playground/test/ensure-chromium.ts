// The browser tests drive the system's Chromium (playwright-core, never a downloaded browser).
// `ensureChromium` runs once before the tests (vitest globalSetup, test/global-setup.ts), so that
// the README's `pnpm install && pnpm test` is the whole set-up on a fresh Debian machine: when
// Chromium is missing it installs Debian's `chromium` package — if it may — or says how to.
import { spawnSync } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'

/** Where Debian's `chromium` package puts the browser. */
export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium'

/** The Chromium the browser tests launch: `CHROMIUM_PATH`, else Debian's. */
export const CHROMIUM_PATH: string = process.env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH

/** Flags of every test browser: headless, no sandbox (containers), nothing fetched in the background. */
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
]

/** The variable that allows (`1`) or forbids (`0`) installing Chromium, whoever runs the tests. */
export const INSTALL_VARIABLE = 'AGENTX_INSTALL_CHROMIUM'

/** What {@link ensureChromium} needs from the system; tests pass fakes. */
export interface ChromiumSystem {
  env: Readonly<Record<string, string | undefined>>
  /** Whether the process runs as root (uid 0). */
  isRoot: boolean
  isExecutable(path: string): boolean
  /** Whether a command is on PATH. */
  hasCommand(name: string): boolean
  /** Runs a command with the output shown; returns its exit status. */
  run(command: string, args: readonly string[]): number
  log(message: string): void
}

/** How {@link ensureChromium} ended. */
export type ChromiumOutcome = 'present' | 'installed' | 'not-permitted' | 'unsupported' | 'failed'

/**
 * Makes sure the browser tests find Chromium. Nothing happens when it is there. When
 * `CHROMIUM_PATH` names a missing file, that is reported (an explicit choice is never replaced).
 * Otherwise Debian's `chromium` is installed with apt-get when that is permitted — as root, with
 * `CI` set, or with `AGENTX_INSTALL_CHROMIUM=1` (through `sudo -n` when not root);
 * `AGENTX_INSTALL_CHROMIUM=0` forbids it. In every other case it logs what to do, and the browser
 * tests fail saying the same ({@link chromiumMissingMessage}).
 */
export function ensureChromium(system: ChromiumSystem = currentSystem()): ChromiumOutcome {
  const explicit = system.env.CHROMIUM_PATH
  const path = explicit || DEFAULT_CHROMIUM_PATH
  if (system.isExecutable(path)) return 'present'
  if (explicit) {
    system.log(
      `CHROMIUM_PATH is ${explicit}, which is not an executable file. ${chromiumMissingMessage(explicit)}`,
    )
    return 'unsupported'
  }
  const choice = system.env[INSTALL_VARIABLE]
  const permitted = choice === '1' || (choice !== '0' && (system.isRoot || isSet(system.env.CI)))
  if (!permitted) {
    system.log(chromiumMissingMessage(path))
    return 'not-permitted'
  }
  if (!system.hasCommand('apt-get')) {
    system.log(
      `Chromium is missing and this is not a Debian-like system (no apt-get). ${chromiumMissingMessage(path)}`,
    )
    return 'unsupported'
  }
  const asRoot = (args: readonly string[]): [string, readonly string[]] | undefined => {
    if (system.isRoot) return ['env', ['DEBIAN_FRONTEND=noninteractive', ...args]]
    return system.hasCommand('sudo')
      ? ['sudo', ['-n', 'env', 'DEBIAN_FRONTEND=noninteractive', ...args]]
      : undefined
  }
  const update = asRoot(['apt-get', 'update', '-q'])
  const install = asRoot(['apt-get', 'install', '-y', '-q', 'chromium'])
  if (update === undefined || install === undefined) {
    system.log(
      `Chromium is missing, and installing it needs root (there is no sudo). ${chromiumMissingMessage(path)}`,
    )
    return 'failed'
  }
  system.log(`Chromium is missing (${path}): installing Debian's chromium package for the browser tests…`)
  for (const [command, args] of [update, install]) {
    const status = system.run(command, args)
    if (status !== 0) {
      system.log(
        `Installing Chromium failed: \`${[command, ...args].join(' ')}\` exited with ${status}. ${chromiumMissingMessage(path)}`,
      )
      return 'failed'
    }
  }
  if (!system.isExecutable(path)) {
    system.log(`The chromium package installed, but there is no ${path}. ${chromiumMissingMessage(path)}`)
    return 'failed'
  }
  system.log(`Chromium installed: ${path}`)
  return 'installed'
}

/** What to do when Chromium is missing: the browser tests fail with this. */
export function chromiumMissingMessage(path: string = CHROMIUM_PATH): string {
  return (
    `The playground's browser tests need Chromium at ${path}, which is not installed. ` +
    'Install Debian’s package (`sudo apt-get update && sudo apt-get install -y chromium`), ' +
    `or let \`pnpm test\` install it: it does as root, with CI=true or with ${INSTALL_VARIABLE}=1. ` +
    'Or set CHROMIUM_PATH to a Chromium binary. No browser is ever downloaded from elsewhere.'
  )
}

function isSet(value: string | undefined): boolean {
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false'
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

function currentSystem(): ChromiumSystem {
  return {
    env: process.env,
    isRoot: process.getuid?.() === 0,
    isExecutable,
    hasCommand: (name) =>
      (process.env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && isExecutable(join(dir, name))),
    run: (command, args) => spawnSync(command, args, { stdio: 'inherit' }).status ?? 1,
    log: (message) => console.warn(`[playground tests] ${message}`),
  }
}
