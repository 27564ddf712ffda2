import { lookup } from 'node:dns'
import { BlockList, isIP } from 'node:net'
import type { WebhookUrlPolicy } from '../../config.js'

/** What an address is, for the webhook URL policy: only `public` may receive deliveries. */
export type AddressClass =
  | 'public'
  | 'private'
  | 'loopback'
  | 'metadata'
  | 'link_local'
  | 'shared'
  | 'unique_local'
  | 'multicast'
  | 'unspecified'
  | 'documentation'
  | 'reserved'
  | 'invalid'

function blocks(
  entries: [string, number, AddressClass][],
  family: 'ipv4' | 'ipv6',
): [BlockList, AddressClass][] {
  return entries.map(([net, prefix, cls]) => {
    const list = new BlockList()
    list.addSubnet(net, prefix, family)
    return [list, cls]
  })
}

const V4 = blocks(
  [
    ['169.254.169.254', 32, 'metadata'], // cloud instance metadata
    ['0.0.0.0', 8, 'unspecified'],
    ['10.0.0.0', 8, 'private'],
    ['100.64.0.0', 10, 'shared'], // carrier-grade NAT
    ['127.0.0.0', 8, 'loopback'],
    ['169.254.0.0', 16, 'link_local'], // includes the cloud metadata address 169.254.169.254
    ['172.16.0.0', 12, 'private'],
    ['192.0.0.0', 24, 'reserved'],
    ['192.0.2.0', 24, 'documentation'],
    ['192.88.99.0', 24, 'reserved'],
    ['192.168.0.0', 16, 'private'],
    ['198.18.0.0', 15, 'reserved'], // benchmarking
    ['198.51.100.0', 24, 'documentation'],
    ['203.0.113.0', 24, 'documentation'],
    ['224.0.0.0', 4, 'multicast'],
    ['240.0.0.0', 4, 'reserved'], // includes 255.255.255.255
  ],
  'ipv4',
)

const V6 = blocks(
  [
    ['fd00:ec2::254', 128, 'metadata'],
    ['::', 128, 'unspecified'],
    ['::1', 128, 'loopback'],
    ['64:ff9b:1::', 48, 'private'], // local-use NAT64
    ['100::', 64, 'reserved'], // discard
    ['2001::', 23, 'reserved'], // IETF protocol assignments, Teredo
    ['2001:db8::', 32, 'documentation'],
    ['3fff::', 20, 'documentation'],
    ['fc00::', 7, 'unique_local'], // includes fd00:ec2::254 (cloud metadata over IPv6)
    ['fe80::', 10, 'link_local'],
    ['fec0::', 10, 'private'], // deprecated site-local
    ['ff00::', 8, 'multicast'],
  ],
  'ipv6',
)

const GLOBAL_UNICAST = new BlockList()
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6')

/** The eight 16-bit groups of an IPv6 address (a trailing dotted quad becomes the last two). */
function expandV6(address: string): number[] | null {
  const text = address
    .split('%')[0]
    .replace(
      /(\d+)\.(\d+)\.(\d+)\.(\d+)$/,
      (_m, a, b, c, d) =>
        `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`,
    )
  const halves = text.split('::')
  if (halves.length > 2) return null
  const parse = (part: string) => (part ? part.split(':').map((x) => parseInt(x, 16)) : [])
  const head = parse(halves[0])
  const tail = halves.length === 2 ? parse(halves[1]) : []
  const fill = 8 - head.length - tail.length
  if (
    fill < 0 ||
    (halves.length === 1 && fill !== 0) ||
    [...head, ...tail].some((x) => Number.isNaN(x))
  )
    return null
  return [...head, ...Array(fill).fill(0), ...tail]
}

/** The IPv4 address an IPv6 address carries (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16), if any. */
function embeddedV4(address: string): string | null {
  const g = expandV6(address)
  if (!g || g.length !== 8) return null
  const quad = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return quad(g[6], g[7])
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0))
    return quad(g[6], g[7])
  if (g[0] === 0x2002) return quad(g[1], g[2])
  return null
}

/** Classifies one IP address (v4 or v6, including IPv4 embedded in IPv6). */
export function classifyAddress(address: string): AddressClass {
  const family = isIP(address)
  if (family === 4) {
    for (const [list, cls] of V4) if (list.check(address, 'ipv4')) return cls
    return 'public'
  }
  if (family === 6) {
    const bare = address.split('%')[0]
    const v4 = embeddedV4(bare)
    if (v4) return classifyAddress(v4)
    for (const [list, cls] of V6) if (list.check(bare, 'ipv6')) return cls
    return GLOBAL_UNICAST.check(bare, 'ipv6') ? 'public' : 'reserved'
  }
  return 'invalid'
}

/** Host names that only mean something inside a private network. */
export function isInternalHostname(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '')
  if (!h.includes('.')) return true
  return (
    h === 'localhost' ||
    /\.(localhost|local|internal|intranet|lan|home\.arpa|corp|private)$/.test(h)
  )
}

/** Names under the special-use TLDs `.test`, `.example` and `.invalid` (RFC 2606, 6761): never publicly resolvable. */
export function isReservedHostname(hostname: string): boolean {
  return /(^|\.)(test|example|invalid)$/.test(hostname.toLowerCase().replace(/\.$/, ''))
}

/** A DNS name that could exist on the public internet: LDH labels of 1–63 characters and an alphabetic (or IDN) TLD. */
function isPublicDnsName(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '')
  if (h.length > 253) return false
  const labels = h.split('.')
  if (labels.length < 2 || labels.some((l) => !/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(l)))
    return false
  const tld = labels[labels.length - 1]
  return /^[a-z]{2,63}$/.test(tld) || /^xn--[a-z0-9-]+$/.test(tld)
}

export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>

/** Every address a name resolves to (the system resolver, as the delivery connection will see it). */
export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    lookup(hostname, { all: true, verbatim: true }, (err, addresses) =>
      err ? reject(err) : resolve(addresses),
    )
  })

export type { WebhookUrlPolicy }

export class WebhookUrlRefused extends Error {}

/** The host of a URL without IPv6 brackets. */
export function urlHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '')
}

/**
 * Parses and checks a webhook URL against the policy: HTTPS on a host whose every address is public
 * (`allow_private` also permits http:// and private hosts, for local development and tests;
 * `allow_local_http` permits http:// to a non-public host only, and judges https:// like `public`).
 * Throws WebhookUrlRefused with a reason fit for the caller.
 */
export async function checkWebhookUrl(
  raw: string,
  policy: WebhookUrlPolicy,
  resolve: Resolver = systemResolver,
): Promise<URL> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new WebhookUrlRefused('The url is not a valid absolute URL.')
  }
  const httpAllowed = policy === 'allow_private' || policy === 'allow_local_http'
  if (url.protocol !== 'https:' && !(httpAllowed && url.protocol === 'http:')) {
    throw new WebhookUrlRefused('The url must use https://.')
  }
  if (url.username || url.password)
    throw new WebhookUrlRefused('The url must not carry credentials.')
  if (url.hash) throw new WebhookUrlRefused('The url must not carry a fragment.')
  if (policy === 'allow_private') return url
  if (policy === 'allow_local_http' && url.protocol === 'http:') {
    await assertLocalHost(urlHost(url), resolve)
    return url
  }
  await assertPublicHost(urlHost(url), resolve, 'registration')
  return url
}

/** For plain http under `allow_local_http`: the host must be a local receiver (no public address), never a public server. */
async function assertLocalHost(host: string, resolve: Resolver): Promise<void> {
  const refuse = () =>
    new WebhookUrlRefused(
      'The url must use https://; plain http:// is accepted only for a receiver on a local or private address.',
    )
  if (isIP(host)) {
    if (classifyAddress(host) === 'public') throw refuse()
    return
  }
  if (isInternalHostname(host)) return
  let addresses: { address: string; family: number }[]
  try {
    addresses = await resolve(host)
  } catch {
    throw new WebhookUrlRefused('The url host does not resolve to an address.')
  }
  if (addresses.length === 0 || addresses.some((a) => classifyAddress(a.address) === 'public'))
    throw refuse()
}

/**
 * Refuses a host that is, or resolves to, anything but public addresses; answers the checked addresses.
 * At `registration` a well-formed public DNS name that does not resolve *now* is accepted (answering no
 * addresses): the service's resolver may be down or offline, and a name cannot be told missing from
 * unreachable DNS. Nothing is sent to it: every `delivery` resolves again and refuses unless it resolves
 * to public addresses only.
 */
export async function assertPublicHost(
  host: string,
  resolve: Resolver = systemResolver,
  stage: 'registration' | 'delivery' = 'delivery',
): Promise<{ address: string; family: number }[]> {
  if (isIP(host)) {
    const cls = classifyAddress(host)
    if (cls !== 'public')
      throw new WebhookUrlRefused(
        `The url points to a ${cls.replace('_', '-')} address; only public addresses receive webhooks.`,
      )
    return [{ address: host, family: isIP(host) }]
  }
  if (isInternalHostname(host))
    throw new WebhookUrlRefused(
      'The url host is an internal name; use a publicly resolvable hostname.',
    )
  if (isReservedHostname(host))
    throw new WebhookUrlRefused(
      'The url host is under a reserved top-level domain that never resolves publicly.',
    )
  if (!isPublicDnsName(host))
    throw new WebhookUrlRefused('The url host is not a valid public DNS name.')
  let addresses: { address: string; family: number }[]
  try {
    addresses = await resolve(host)
  } catch {
    addresses = []
  }
  if (addresses.length === 0) {
    if (stage === 'registration') return []
    throw new WebhookUrlRefused('The url host does not resolve to an address.')
  }
  for (const a of addresses) {
    const cls = classifyAddress(a.address)
    if (cls !== 'public')
      throw new WebhookUrlRefused(
        `The url host resolves to a ${cls.replace('_', '-')} address; only public addresses receive webhooks.`,
      )
  }
  return addresses
}
