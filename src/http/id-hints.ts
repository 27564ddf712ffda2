import type { ErrorCode } from './errors.js'

/** Each kind of id by its prefix: what it is called, and the not-found its own paths answer. */
const KINDS: Readonly<Record<string, { name: string; notFound?: ErrorCode }>> = {
  chd: { name: 'a cardholder', notFound: 'cardholder_not_found' },
  acct: { name: 'an account', notFound: 'account_not_found' },
  card: { name: 'a card', notFound: 'card_not_found' },
  auth: { name: 'an authorization', notFound: 'authorization_not_found' },
  txn: { name: 'a transaction', notFound: 'transaction_not_found' },
  dsp: { name: 'a dispute', notFound: 'dispute_not_found' },
  tdsa: { name: 'a 3-D Secure authentication', notFound: 'authentication_not_found' },
  pkg: { name: 'an eSIM package', notFound: 'esim_package_not_found' },
  esord: { name: 'an eSIM order', notFound: 'esim_order_not_found' },
  esim: { name: 'an eSIM', notFound: 'esim_not_found' },
  ntok: { name: 'a network token', notFound: 'token_not_found' },
  evt: { name: 'an event', notFound: 'event_not_found' },
  whe: { name: 'a webhook endpoint', notFound: 'webhook_endpoint_not_found' },
  aep: { name: 'an authorization endpoint', notFound: 'authorization_endpoint_not_found' },
  rpt: { name: 'a report', notFound: 'report_not_found' },
  org: { name: 'an organization', notFound: 'organization_not_found' },
  prog: { name: 'a program', notFound: 'program_not_found' },
  oc: { name: 'a client', notFound: 'client_not_found' },
  usr: { name: 'a user', notFound: 'user_not_found' },
  arl: { name: 'an authorization rule', notFound: 'authorization_rule_not_found' },
  le: { name: 'a ledger entry' },
  hold: { name: 'a hold' },
  kyc: { name: 'a KYC check' },
  kycdoc: { name: 'a KYC document' },
  topup: { name: 'an eSIM top-up offer' },
  h5: { name: 'an H5 link' },
  whd: { name: 'a webhook delivery' },
  req: { name: 'a request id' },
}

const PREFIX = /^([a-z0-9]+)_[0-9A-Za-z]/

/**
 * When a path's id is of another kind than its not-found names (`GET /v1/cards/chd_…`), the sentence that says so:
 * "chd_… is a cardholder id; this path takes a card id (card_…)". Null when every path id is of its own kind.
 */
export function idOfAnotherKind(code: ErrorCode, params: unknown): string | null {
  const expected = Object.entries(KINDS).find(([, kind]) => kind.notFound === code)
  if (!expected || !params || typeof params !== 'object') return null
  const [wantPrefix, want] = expected
  const ids = Object.values(params as Record<string, unknown>).filter((v) => typeof v === 'string')
  if (ids.some((value) => PREFIX.exec(value)?.[1] === wantPrefix)) return null
  for (const value of ids) {
    const prefix = PREFIX.exec(value)?.[1]
    const kind = prefix === undefined ? undefined : KINDS[prefix]
    if (prefix === wantPrefix || kind === undefined) continue
    return `${value} is ${kind.name} id; this path takes ${want.name} id (${wantPrefix}_…).`
  }
  return null
}
