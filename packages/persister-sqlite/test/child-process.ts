import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const register = fileURLToPath(new URL('./register-typescript-source.mjs', import.meta.url))

/**
 * A child `node` process that runs `script` (a path under test/) against this package's source;
 * with `stdin`, the test can write lines to it (a start signal).
 */
export function startChild(
  script: string,
  args: readonly string[],
  options: { stdin?: boolean } = {},
): ChildProcess {
  return spawn(
    process.execPath,
    [
      '--conditions=@agentx/source',
      '--disable-warning=ExperimentalWarning',
      '--import',
      register,
      fileURLToPath(new URL(script, import.meta.url)),
      ...args,
    ],
    { stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] },
  )
}

/** The next JSON line the child prints (rejects if it exits first). */
export function nextLine<T>(child: ChildProcess): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let buffer = ''
    let errors = ''
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8')
      const end = buffer.indexOf('\n')
      if (end < 0) return
      cleanUp()
      resolve(JSON.parse(buffer.slice(0, end)) as T)
    }
    const onError = (chunk: Buffer) => {
      errors += chunk.toString('utf8')
    }
    const onExit = (code: number | null) => {
      cleanUp()
      reject(new Error(`the child exited with ${code} before printing a line:\n${errors}`))
    }
    const cleanUp = () => {
      child.stdout!.off('data', onData)
      child.stderr!.off('data', onError)
      child.off('exit', onExit)
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onError)
    child.on('exit', onExit)
  })
}

/** Runs `script` to completion and returns the first JSON line it printed. */
export async function runChild<T>(script: string, args: readonly string[]): Promise<T> {
  return finishChild<T>(startChild(script, args))
}

/** Waits for `child` to print its next JSON line and exit with code 0; returns the line. */
export async function finishChild<T>(child: ChildProcess): Promise<T> {
  const line = nextLine<T>(child)
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  const [value, code] = await Promise.all([line, exited])
  if (code !== 0) throw new Error(`the child exited with ${code}`)
  return value
}

/** Kills `child` with SIGKILL (no clean-up of any kind runs) and waits until it is gone. */
export async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.on('exit', resolve))
  child.kill('SIGKILL')
  await exited
}
