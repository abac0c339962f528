import { describe, expect, it } from 'vitest'
import { type ChromiumSystem, DEFAULT_CHROMIUM_PATH, ensureChromium } from './ensure-chromium.js'

/** A fake system: which files exist, which commands there are, what each command run exits with. */
function fakeSystem(
  options: {
    env?: Record<string, string>
    isRoot?: boolean
    installed?: boolean
    commands?: string[]
    exitStatus?: (command: string, args: readonly string[]) => number
  } = {},
) {
  const files = new Set<string>(options.installed ? [DEFAULT_CHROMIUM_PATH] : [])
  const commands = new Set(options.commands ?? ['apt-get', 'sudo'])
  const runs: string[] = []
  const logs: string[] = []
  const system: ChromiumSystem = {
    env: options.env ?? {},
    isRoot: options.isRoot ?? false,
    isExecutable: (path) => files.has(path),
    hasCommand: (name) => commands.has(name),
    run: (command, args) => {
      runs.push([command, ...args].join(' '))
      const status = options.exitStatus?.(command, args) ?? 0
      if (status === 0 && args.includes('install')) files.add(DEFAULT_CHROMIUM_PATH)
      return status
    },
    log: (message) => logs.push(message),
  }
  return { system, runs, logs }
}

describe('ensureChromium: the set-up step of the browser tests', () => {
  it('does nothing when Chromium is there', () => {
    const { system, runs, logs } = fakeSystem({ installed: true, isRoot: true })
    expect(ensureChromium(system)).toBe('present')
    expect(runs).toEqual([])
    expect(logs).toEqual([])
  })

  it('installs Debian’s chromium with apt-get as root (a fresh Debian machine or container)', () => {
    const { system, runs } = fakeSystem({ isRoot: true })
    expect(ensureChromium(system)).toBe('installed')
    expect(runs).toEqual([
      'env DEBIAN_FRONTEND=noninteractive apt-get update -q',
      'env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium',
    ])
  })

  it('installs it through sudo -n with CI set or AGENTX_INSTALL_CHROMIUM=1', () => {
    for (const env of [{ CI: 'true' }, { CI: '1' }, { AGENTX_INSTALL_CHROMIUM: '1' }]) {
      const { system, runs } = fakeSystem({ env })
      expect(ensureChromium(system)).toBe('installed')
      expect(runs).toEqual([
        'sudo -n env DEBIAN_FRONTEND=noninteractive apt-get update -q',
        'sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium',
      ])
    }
  })

  it('installs nothing when not permitted, and says what to do', () => {
    for (const options of [
      { env: {} },
      { env: { CI: 'false' } },
      { isRoot: true, env: { AGENTX_INSTALL_CHROMIUM: '0' } },
    ]) {
      const { system, runs, logs } = fakeSystem(options)
      expect(ensureChromium(system)).toBe('not-permitted')
      expect(runs).toEqual([])
      expect(logs.join('\n')).toContain('sudo apt-get update && sudo apt-get install -y chromium')
      expect(logs.join('\n')).toContain('AGENTX_INSTALL_CHROMIUM=1')
      expect(logs.join('\n')).toContain('CHROMIUM_PATH')
    }
  })

  it('never replaces an explicit CHROMIUM_PATH that is missing', () => {
    const { system, runs, logs } = fakeSystem({ isRoot: true, env: { CHROMIUM_PATH: '/opt/chrome/chrome' } })
    expect(ensureChromium(system)).toBe('unsupported')
    expect(runs).toEqual([])
    expect(logs[0]).toContain('CHROMIUM_PATH is /opt/chrome/chrome, which is not an executable file')
  })

  it('explains a system without apt-get, without sudo, or a failed install', () => {
    const noApt = fakeSystem({ isRoot: true, commands: [] })
    expect(ensureChromium(noApt.system)).toBe('unsupported')
    expect(noApt.logs[0]).toContain('no apt-get')

    const noSudo = fakeSystem({ env: { CI: 'true' }, commands: ['apt-get'] })
    expect(ensureChromium(noSudo.system)).toBe('failed')
    expect(noSudo.runs).toEqual([])
    expect(noSudo.logs[0]).toContain('needs root')

    const offline = fakeSystem({
      isRoot: true,
      exitStatus: (_command, args) => (args.includes('update') ? 100 : 0),
    })
    expect(ensureChromium(offline.system)).toBe('failed')
    expect(offline.runs).toHaveLength(1)
    expect(offline.logs.at(-1)).toContain('exited with 100')
  })
})
