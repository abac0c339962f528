import { describe, expect, it } from 'vitest'
import {
  allowedHostsFor,
  checkRequestOrigin,
  exposureWarning,
  isLoopback,
  parseAllowedHosts,
} from './check-request-origin.js'

describe('checkRequestOrigin', () => {
  const allowed = allowedHostsFor('127.0.0.1', 4173)

  it('accepts the server’s own host names, with or without a same-origin Origin', () => {
    expect(checkRequestOrigin({ host: '127.0.0.1:4173' }, allowed)).toBeUndefined()
    expect(
      checkRequestOrigin({ host: 'localhost:4173', origin: 'http://localhost:4173' }, allowed),
    ).toBeUndefined()
    expect(
      checkRequestOrigin({ host: '[::1]:4173', 'sec-fetch-site': 'same-origin' }, allowed),
    ).toBeUndefined()
    expect(checkRequestOrigin({ host: 'LOCALHOST:4173' }, allowed)).toBeUndefined()
  })

  it('refuses foreign or missing Host headers (DNS rebinding)', () => {
    expect(checkRequestOrigin({ host: 'attacker.example:4173' }, allowed)).toBe('foreign Host header')
    expect(checkRequestOrigin({ host: '127.0.0.1:80' }, allowed)).toBe('foreign Host header')
    expect(checkRequestOrigin({ host: '127.0.0.1' }, allowed)).toBe('foreign Host header')
    expect(checkRequestOrigin({}, allowed)).toBe('foreign Host header')
  })

  it('refuses cross-origin, opaque, malformed and cross-site requests', () => {
    const host = '127.0.0.1:4173'
    expect(checkRequestOrigin({ host, origin: 'http://attacker.example' }, allowed)).toBe(
      'cross-origin request',
    )
    expect(checkRequestOrigin({ host, origin: 'https://127.0.0.1:4173' }, allowed)).toBe(
      'cross-origin request',
    )
    expect(checkRequestOrigin({ host, origin: 'https://127.0.0.1:4174' }, allowed)).toBe(
      'cross-origin request',
    )
    expect(checkRequestOrigin({ host, origin: 'ftp://127.0.0.1:4173' }, allowed)).toBe('cross-origin request')
    expect(checkRequestOrigin({ host, origin: 'http://localhost:3000' }, allowed)).toBe(
      'cross-origin request',
    )
    expect(checkRequestOrigin({ host, origin: 'null' }, allowed)).toBe('opaque Origin')
    expect(checkRequestOrigin({ host, origin: 'not a url' }, allowed)).toBe('malformed Origin header')
    expect(checkRequestOrigin({ host, 'sec-fetch-site': 'cross-site' }, allowed)).toBe('cross-site request')
    expect(checkRequestOrigin({ host, 'sec-fetch-site': 'same-site' }, allowed)).toBe('cross-site request')
  })

  it('only adds the loopback aliases when the server listens on loopback', () => {
    expect([...allowedHostsFor('192.168.1.20', 80)]).toEqual(['192.168.1.20:80'])
    expect([...allowedHostsFor('::1', 8080)]).toEqual(['[::1]:8080', '127.0.0.1:8080', 'localhost:8080'])
    const wildcard = allowedHostsFor('0.0.0.0', 4173, () => ['192.168.1.20', 'fe80::1', 'my-box'])
    expect(
      checkRequestOrigin({ host: '192.168.1.20:4173', origin: 'http://192.168.1.20:4173' }, wildcard),
    ).toBeUndefined()
    expect(checkRequestOrigin({ host: '[fe80::1]:4173' }, wildcard)).toBeUndefined()
    expect(checkRequestOrigin({ host: 'my-box:4173' }, wildcard)).toBeUndefined()
    expect(checkRequestOrigin({ host: 'attacker.example:4173' }, wildcard)).toBe('foreign Host header')
    expect(isLoopback('127.0.0.1')).toBe(true)
    expect(isLoopback('127.1.2.3')).toBe(true)
    expect(isLoopback('0.0.0.0')).toBe(false)
  })

  it('admits the extra hosts of ALLOWED_HOSTS: a bare name on any port, name:port exactly', () => {
    const extended = new Set([
      ...allowed,
      ...parseAllowedHosts(' Tunnel.example , fwd.example:8080,[fd00::1] '),
    ])
    expect(parseAllowedHosts('tunnel.example,fwd.example:8080')).toEqual([
      'tunnel.example:*',
      'fwd.example:8080',
    ])
    expect(checkRequestOrigin({ host: 'tunnel.example:9999' }, extended)).toBeUndefined()
    expect(checkRequestOrigin({ host: 'tunnel.example' }, extended)).toBeUndefined()
    expect(
      checkRequestOrigin({ host: 'tunnel.example:9999', origin: 'http://tunnel.example:9999' }, extended),
    ).toBeUndefined()
    // A forward that ends TLS: the browser's Origin is https (before, every POST was refused).
    const forwarded = new Set(parseAllowedHosts('Tunnel.example'))
    expect(
      checkRequestOrigin({ host: 'tunnel.example', origin: 'https://tunnel.example' }, extended, forwarded),
    ).toBeUndefined()
    expect(
      checkRequestOrigin({ host: 'tunnel.example', origin: 'https://evil.example' }, extended, forwarded),
    ).toBe('cross-origin request')
    // The server's own hosts are plain http: an https Origin for them is another site.
    expect(
      checkRequestOrigin({ host: '127.0.0.1:4173', origin: 'https://127.0.0.1:4173' }, extended, forwarded),
    ).toBe('cross-origin request')
    expect(checkRequestOrigin({ host: 'fwd.example:8080' }, extended)).toBeUndefined()
    expect(checkRequestOrigin({ host: 'fwd.example:8081' }, extended)).toBe('foreign Host header')
    expect(checkRequestOrigin({ host: '[fd00::1]:3000' }, extended)).toBeUndefined()
    expect(checkRequestOrigin({ host: 'evil.tunnel.example:9999' }, extended)).toBe('foreign Host header')
    expect(parseAllowedHosts(undefined)).toEqual([])
  })

  it('warns at start-up only for addresses other machines can reach', () => {
    expect(exposureWarning('127.0.0.2')).toBeUndefined()
    expect(exposureWarning('127.0.0.1')).toBeUndefined()
    expect(exposureWarning('::1')).toBeUndefined()
    expect(exposureWarning('localhost')).toBeUndefined()
    expect(exposureWarning('0.0.0.0')).toContain('not loopback')
    expect(exposureWarning('192.168.1.20')).toContain('no authentication')
  })
})
