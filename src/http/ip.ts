import { BlockList, isIP } from 'node:net'
import type { FastifyRequest } from 'fastify'

declare module 'fastify' {
  interface FastifyInstance {
    /** `TRUSTED_PROXIES` (config): the peers whose X-Forwarded-For is believed; empty: no peer's. */
    trustedProxies: string[]
  }
}

/**
 * The caller's address: the socket peer, unless the peer is one of `TRUSTED_PROXIES`; then the last
 * X-Forwarded-For entry (the one that proxy appended; earlier entries are whatever the caller sent), else the
 * peer. Without `TRUSTED_PROXIES` no header is believed, so a caller can never choose the address an IP
 * allowlist or a per-address limit sees.
 */
export function clientAddress(req: FastifyRequest): string {
  const peer = normalize(req.socket.remoteAddress ?? '')
  const trusted = req.server.trustedProxies
  if (trusted.length === 0 || !ipAllowed(peer, trusted)) return peer
  const header = req.headers['x-forwarded-for']
  const raw = Array.isArray(header) ? header.join(',') : header
  if (raw) {
    const parts = raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
    if (parts.length > 0) return normalize(parts[parts.length - 1])
  }
  return peer
}

/** Plain address text: proxies may add a port (`203.0.113.5:443`, `[2001:db8::1]:443`); IPv4-mapped IPv6 becomes IPv4. */
function normalize(raw: string): string {
  let address = raw.trim()
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address)
  if (bracketed) address = bracketed[1]
  const v4WithPort = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(address)
  if (v4WithPort) address = v4WithPort[1]
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  return mapped ? mapped[1] : address
}

/** Parses `1.2.3.0/24`, `2001:db8::/32` or a bare address; null when malformed. */
export function parseCidr(
  value: string,
): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | null {
  const [address, prefixText, extra] = value.trim().split('/')
  if (extra !== undefined) return null
  const version = isIP(address)
  if (version === 0) return null
  const max = version === 4 ? 32 : 128
  const prefix = prefixText === undefined ? max : Number(prefixText)
  if (
    !Number.isInteger(prefix) ||
    prefix < 0 ||
    prefix > max ||
    (prefixText !== undefined && !/^\d+$/.test(prefixText))
  )
    return null
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' }
}

const compiled = new Map<string, BlockList>()

function toBlockList(cidrs: string[]): BlockList {
  const cacheKey = cidrs.join(',')
  let list = compiled.get(cacheKey)
  if (!list) {
    list = new BlockList()
    for (const cidr of cidrs) {
      const parsed = parseCidr(cidr)
      if (parsed) list.addSubnet(parsed.address, parsed.prefix, parsed.family)
    }
    if (compiled.size > 1000) compiled.clear()
    compiled.set(cacheKey, list)
  }
  return list
}

/** An empty or absent list means "no restriction". */
export function ipAllowed(address: string, cidrs: string[] | null | undefined): boolean {
  if (!cidrs || cidrs.length === 0) return true
  const version = isIP(address)
  if (version === 0) return false
  return toBlockList(cidrs).check(address, version === 4 ? 'ipv4' : 'ipv6')
}
