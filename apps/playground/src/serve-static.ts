import { readFile } from 'node:fs/promises'
import type { ServerResponse } from 'node:http'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
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
  '/code-highlight.js': { file: 'code-highlight.js', type: 'text/javascript; charset=utf-8' },
  '/trace.js': { file: 'trace.js', type: 'text/javascript; charset=utf-8' },
  '/styles.css': { file: 'styles.css', type: 'text/css; charset=utf-8' },
  '/favicon.svg': { file: 'favicon.svg', type: 'image/svg+xml' },
}

const JAVASCRIPT = 'text/javascript; charset=utf-8'

/** The languages code blocks are highlighted in (highlight.js grammars, each an ES module). */
export const HIGHLIGHT_LANGUAGES: readonly string[] = [
  'bash',
  'css',
  'diff',
  'go',
  'java',
  'javascript',
  'json',
  'python',
  'rust',
  'shell',
  'sql',
  'typescript',
  'xml',
  'yaml',
]

/**
 * The browser libraries of the UI, served from the installed packages (never a CDN): markdown-it's
 * self-contained ES module build and highlight.js's ES module core and grammars.
 */
const VENDOR_FILES: Readonly<Record<string, { packageName: string; file: string }>> = {
  '/vendor/markdown-it.js': { packageName: 'markdown-it', file: 'dist/browser/markdown-it.esm.min.mjs' },
  '/vendor/highlight.js': { packageName: '@highlightjs/cdn-assets', file: 'es/core.min.js' },
  ...Object.fromEntries(
    HIGHLIGHT_LANGUAGES.map((language) => [
      `/vendor/highlight/${language}.js`,
      { packageName: '@highlightjs/cdn-assets', file: `es/languages/${language}.min.js` },
    ]),
  ),
}

const require = createRequire(import.meta.url)
const packageDirs = new Map<string, string>()

/** The path of a vendor file in its installed package. */
function vendorPath(entry: { packageName: string; file: string }): string {
  let dir = packageDirs.get(entry.packageName)
  if (dir === undefined) {
    dir = dirname(require.resolve(`${entry.packageName}/package.json`))
    packageDirs.set(entry.packageName, dir)
  }
  return join(dir, entry.file)
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
 * system): the files of `public/` and the vendor libraries. Returns `false` when the path is not
 * a UI file.
 */
export async function serveStatic(
  pathname: string,
  response: ServerResponse,
  headOnly: boolean,
): Promise<boolean> {
  const entry = FILES[pathname]
  const vendor = entry === undefined ? VENDOR_FILES[pathname] : undefined
  if (entry === undefined && vendor === undefined) return false
  const body = await readFile(entry === undefined ? vendorPath(vendor!) : join(PUBLIC_DIR, entry.file))
  response.writeHead(200, {
    'content-type': entry?.type ?? JAVASCRIPT,
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
