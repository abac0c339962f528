#!/usr/bin/env node
// The playground's entry point: `pnpm start` at the repository root (or `node dist/main.js`).
import type { Logger } from '@agentx/core'
import { exposureWarning } from './check-request-origin.js'
import { redact, secretsOf } from './load-providers.js'
import { startPlayground } from './start-playground.js'

const env = process.env
const secrets = secretsOf(env)

/** Logs to the console with every secret value scrubbed. */
const logger: Logger = {
  debug: () => undefined,
  info: (message, data) => console.info(line(message, data)),
  warn: (message, data) => console.warn(line(message, data)),
  error: (message, data) => console.error(line(message, data)),
}

function line(message: string, data: Record<string, unknown> | undefined): string {
  return redact(data === undefined ? message : `${message} ${JSON.stringify(data)}`, secrets)
}

function portFrom(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return 4173
  const port = Number(value)
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    console.error(`PORT must be an integer between 0 and 65535, got "${value}".`)
    process.exit(1)
  }
  return port
}

const host = env.HOST?.trim() || '127.0.0.1'
const port = portFrom(env.PORT)

try {
  const playground = await startPlayground({
    env,
    host,
    port,
    workspace: env.AGENTX_WORKSPACE?.trim() || process.cwd(),
    logger,
  })
  const available = playground.providers
    .filter((provider) => provider.adapter !== undefined)
    .map((provider) => provider.label)
  console.info(`AgentX playground listening on ${playground.url}`)
  console.info(`  providers: ${available.join(', ')}`)
  for (const provider of playground.providers) {
    if (provider.unavailableReason !== undefined)
      console.warn(`  ${provider.label} unavailable: ${provider.unavailableReason}`)
  }
  console.info(`  storage:   ${playground.storage.kind} (${playground.storage.location})`)
  if (env.ALLOWED_HOSTS?.trim()) console.info(`  also answers to Host: ${env.ALLOWED_HOSTS.trim()}`)
  const warning = exposureWarning(host)
  if (warning !== undefined) console.warn(`  warning: ${warning}`)
  let stopping = false
  const stop = (signal: string): void => {
    if (stopping) process.exit(1)
    stopping = true
    console.info(`\n${signal}: saving and closing…`)
    playground.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(
          redact(`Closing failed: ${error instanceof Error ? error.message : String(error)}`, secrets),
        )
        process.exit(1)
      },
    )
  }
  process.on('SIGINT', () => stop('SIGINT'))
  process.on('SIGTERM', () => stop('SIGTERM'))
} catch (error) {
  const code = (error as { code?: unknown } | undefined)?.code
  const message = error instanceof Error ? error.message : String(error)
  if (code === 'EADDRINUSE')
    console.error(`Port ${port} is in use: set PORT to another port (PORT=0 picks a free one).`)
  else console.error(redact(`The playground could not start: ${message}`, secrets))
  process.exit(1)
}
