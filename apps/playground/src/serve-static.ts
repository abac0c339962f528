import { readFile } from 'node:fs/promises'
import type { ServerResponse } from 'node:http'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The folder of the web UI: plain HTML, CSS and JavaScript, no build step. */
export const PUBLIC_DIR: string = fileURLToPath(new URL('../public/', import.meta.url))

const FILES: Readonly<Record<string, { file: string; type: string }>> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/index.html': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/api.js': { file: 'api.js', type: 'text/javascript; charset=utf-8' },
  '/conversation.js': { file: 'conversation.js', type: 'text/javascript; charset=utf-8' },
  '/dom.js': { file: 'dom.js', type: 'text/javascript; charset=utf-8' },
  '/header.js': { file: 'header.js', type: 'text/javascript; charset=utf-8' },
  '/session-list.js': { file: 'session-list.js', type: 'text/javascript; charset=utf-8' },
  '/shortcuts.js': { file: 'shortcuts.js', type: 'text/javascript; charset=utf-8' },
  '/state.js': { file: 'state.js', type: 'text/javascript; charset=utf-8' },
  '/theme.js': { file: 'theme.js', type: 'text/javascript; charset=utf-8' },
  '/markdown.js': { file: 'markdown.js', type: 'text/javascript; charset=utf-8' },
  '/trace.js': { file: 'trace.js', type: 'text/javascript; charset=utf-8' },
  '/styles.css': { file: 'styles.css', type: 'text/css; charset=utf-8' },
  '/favicon.svg': { file: 'favicon.svg', type: 'image/svg+xml' },
}

/**
 * The Content-Security-Policy of every page: scripts and styles from this server only, so even a
 * rendering bug could not run injected markup.
 */
export const CONTENT_SECURITY_POLICY: string = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

/**
 * Serves one file of the UI by its URL path (a fixed allow-list, so no path ever reaches the file
 * system). Returns `false` when the path is not a UI file.
 */
export async function serveStatic(
  pathname: string,
  response: ServerResponse,
  headOnly: boolean,
): Promise<boolean> {
  const entry = FILES[pathname]
  if (entry === undefined) return false
  const body = await readFile(join(PUBLIC_DIR, entry.file))
  response.writeHead(200, {
    'content-type': entry.type,
    'content-length': body.length,
    'cache-control': 'no-cache',
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
  })
  response.end(headOnly ? undefined : body)
  return true
}
