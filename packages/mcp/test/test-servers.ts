import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import type { McpStdioServer } from '../src/index.js'

/** The 1×1 PNG the test server's image tools return (the same literal as in servers/tool-server.mjs). */
export const PIXEL_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII='

const STDIO_SERVER = fileURLToPath(new URL('./servers/stdio-server.mjs', import.meta.url))
const HTTP_SERVER = fileURLToPath(new URL('./servers/http-server.mjs', import.meta.url))

/** The stdio test server as `connectMcp` takes it. */
export function stdioServer(extra: Partial<McpStdioServer> = {}): McpStdioServer {
  return { command: process.execPath, args: [STDIO_SERVER], ...extra }
}

/** A running HTTP test server (a child process, so a test can kill it like a crash). */
export interface HttpTestServer {
  url: string
  port: number
  process: ChildProcess
  /** Kills it with SIGKILL and waits until it is gone. */
  kill(): Promise<void>
}

/** Starts the HTTP test server on 127.0.0.1 (`port` 0: any free port). */
export async function startHttpServer(
  options: { port?: number; resumable?: boolean } = {},
): Promise<HttpTestServer> {
  const args = [HTTP_SERVER, String(options.port ?? 0), ...(options.resumable ? ['--resumable'] : [])]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! })
    lines.once('line', (line) => resolve((JSON.parse(line) as { port: number }).port))
    child.once('exit', (code) => reject(new Error(`the HTTP test server exited with code ${code}`)))
  })
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    process: child,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    },
  }
}

/** Whether a process id is still running. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Waits until `condition` holds (polling), or fails after `timeoutMs`. */
export async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
