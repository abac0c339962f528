import { hostname, networkInterfaces } from 'node:os'
import type { IncomingHttpHeaders } from 'node:http'

/** Host names that always mean this machine. */
const LOOPBACK_NAMES: readonly string[] = ['127.0.0.1', 'localhost', '[::1]']

/**
 * The `Host` values the server answers to: its own `host:port`, plus the loopback names when it
 * listens on loopback, plus every address of this machine (and its host name) when it listens on
 * all interfaces (`0.0.0.0`, `::`). Anything else — a DNS-rebinding attack uses another name — is
 * foreign.
 *
 * @param interfaceAddresses - This machine's addresses. Default is read from `os.networkInterfaces()`.
 */
export function allowedHostsFor(
  host: string,
  port: number,
  interfaceAddresses: () => string[] = localAddresses,
): Set<string> {
  const allowed = new Set([`${bracket(host)}:${port}`.toLowerCase()])
  if (isLoopback(host)) for (const loopback of LOOPBACK_NAMES) allowed.add(`${loopback}:${port}`)
  if (host === '0.0.0.0' || host === '::' || host === '[::]') {
    for (const name of [...LOOPBACK_NAMES, ...interfaceAddresses()])
      allowed.add(`${bracket(name)}:${port}`.toLowerCase())
  }
  return allowed
}

function bracket(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
}

function localAddresses(): string[] {
  const addresses = Object.values(networkInterfaces())
    .flat()
    .map((entry) => entry?.address)
    .filter((address): address is string => typeof address === 'string')
  return [...addresses, hostname()]
}

/**
 * The allow-list entries of `ALLOWED_HOSTS` (comma-separated): `name:port` admits that `Host`
 * exactly; a bare `name` admits it on any port (`name:*`), as a tunnel or port forward may use
 * another local port than the server's.
 */
export function parseAllowedHosts(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '')
    .map((entry) => (/^(\[[^\]]+\]|[^:]+):\d+$/.test(entry) ? entry : `${bracket(entry)}:*`))
}

/** Whether a `Host` value (or an Origin's host) is in the allow-list; `name:*` entries match any port. */
export function isAllowedHost(host: string, allowedHosts: ReadonlySet<string>): boolean {
  if (allowedHosts.has(host)) return true
  const name = /^(\[[^\]]+\]|[^:]+)(?::\d+)?$/.exec(host)?.[1]
  return name !== undefined && allowedHosts.has(`${name}:*`)
}

/**
 * The start-up warning for a bind address that other machines can reach (the playground has no
 * login), or `undefined` for loopback addresses — all of `127.0.0.0/8`, `::1`, `localhost`.
 */
export function exposureWarning(host: string): string | undefined {
  if (isLoopback(host)) return undefined
  return `HOST=${host} is not loopback; the playground has no authentication.`
}

/** Whether a bind address is loopback only. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(host)
}

/**
 * Why a request must be refused with 403, or `undefined` when it may proceed. Refuses a `Host`
 * that is not the server's own, an `Origin` that is neither `http://<allowed host>` nor
 * `https://<a host of ALLOWED_HOSTS>` (`forwardedHosts`: a forward may end TLS), and a browser's
 * `Sec-Fetch-Site: cross-site`. Requests without `Origin` (curl, same-origin GETs) pass when
 * their `Host` is right.
 */
export function checkRequestOrigin(
  headers: IncomingHttpHeaders,
  allowedHosts: ReadonlySet<string>,
  forwardedHosts: ReadonlySet<string> = new Set(),
): string | undefined {
  const host = headers.host?.toLowerCase()
  if (host === undefined || !isAllowedHost(host, allowedHosts)) return 'foreign Host header'
  const origin = headers.origin
  if (origin !== undefined) {
    if (origin === 'null') return 'opaque Origin'
    let parsed: URL
    try {
      parsed = new URL(origin)
    } catch {
      return 'malformed Origin header'
    }
    // The server speaks http; a tunnel or port forward named in ALLOWED_HOSTS may end TLS before it.
    const originHost = parsed.host.toLowerCase()
    const admitted =
      parsed.protocol === 'http:'
        ? isAllowedHost(originHost, allowedHosts)
        : parsed.protocol === 'https:' && isAllowedHost(originHost, forwardedHosts)
    if (!admitted) return 'cross-origin request'
  }
  const site = headers['sec-fetch-site']
  if (site === 'cross-site' || site === 'same-site') return 'cross-site request'
  return undefined
}
