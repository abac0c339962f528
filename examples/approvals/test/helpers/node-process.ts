// Child node processes for the tests: what they print, what they are sent, how they end.
import { type ChildProcess, spawn } from 'node:child_process'

export interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
}

export interface NodeProcess {
  readonly child: ChildProcess
  readonly pid: number
  /** Everything written to stdout so far. */
  output(): string
  /** Everything written to stderr so far. */
  errors(): string
  /** Resolves when stdout holds `text` at least `times` times; rejects on exit or after `timeoutMs`. */
  waitFor(text: string, times?: number, timeoutMs?: number): Promise<void>
  write(text: string): void
  endInput(): void
  /** Sends `signal` and resolves when the process is gone. */
  kill(signal: NodeJS.Signals): Promise<Exit>
  readonly exited: Promise<Exit>
}

const running = new Set<NodeProcess>()

/** Starts `node …args` with piped stdio. */
export function startNode(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): NodeProcess {
  return startProcess(process.execPath, args, options)
}

/** Starts `command …args` with piped stdio. */
export function startProcess(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): NodeProcess {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  const listeners = new Set<() => void>()
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
    for (const listener of listeners) listener()
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => {
      for (const listener of listeners) listener()
      resolve({ code, signal })
    })
  })
  let isExited = false
  void exited.then(() => {
    isExited = true
    running.delete(handle)
  })
  const count = (text: string): number => stdout.split(text).length - 1
  const handle: NodeProcess = {
    child,
    pid: child.pid ?? -1,
    output: () => stdout,
    errors: () => stderr,
    waitFor(text, times = 1, timeoutMs = 20_000) {
      return new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (count(text) >= times) done()
          else if (isExited || child.exitCode !== null || child.signalCode !== null) {
            done(new Error(`process exited before printing ${JSON.stringify(text)}`))
          }
        }
        const timer = setTimeout(
          () => done(new Error(`no ${JSON.stringify(text)} within ${timeoutMs} ms`)),
          timeoutMs,
        )
        const done = (error?: Error): void => {
          clearTimeout(timer)
          listeners.delete(check)
          if (error === undefined) resolve()
          else reject(new Error(`${error.message}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`))
        }
        listeners.add(check)
        check()
      })
    },
    write(text) {
      child.stdin.write(text)
    },
    endInput() {
      child.stdin.end()
    },
    async kill(signal) {
      if (!isExited) child.kill(signal)
      return exited
    },
    exited,
  }
  running.add(handle)
  return handle
}

/** Kills every child still running (for `afterEach`). */
export async function killAll(): Promise<void> {
  await Promise.all([...running].map((process) => process.kill('SIGKILL')))
}
