import type { ErrorCode } from './errors.js'

/** Each kind of id by its prefix: what it is called, the not-found its paths answer, and their parameter's name. */
const KINDS: Readonly<Record<string, { name: string; notFound?: ErrorCode; param?: string }>> = {
  chd: { name: 'a cardholder', notFound: 'cardholder_not_found', param: 'cardholder_id' },
  acct: { name: 'an account', notFound: 'account_not_found', param: 'account_id' },
  card: { name: 'a card', notFound: 'card_not_found', param: 'card_id' },
  auth: {
    name: 'an authorization',
    notFound: 'authorization_not_found',
    param: 'authorization_id',
  },
  txn: { name: 'a transaction', notFound: 'transaction_not_found', param: 'transaction_id' },
  dsp: { name: 'a dispute', notFound: 'dispute_not_found', param: 'dispute_id' },
  tdsa: {
    name: 'a 3-D Secure authentication',
    notFound: 'authentication_not_found',
    param: 'authentication_id',
  },
  pkg: { name: 'an eSIM package', notFound: 'esim_package_not_found', param: 'package_id' },
  esord: { name: 'an eSIM order', notFound: 'esim_order_not_found', param: 'order_id' },
  esim: { name: 'an eSIM', notFound: 'esim_not_found', param: 'esim_id' },
  ntok: { name: 'a network token', notFound: 'token_not_found', param: 'network_token_id' },
  clk: { name: 'a sandbox clock', notFound: 'sandbox_clock_not_found', param: 'clock_id' },
  evt: { name: 'an event', notFound: 'event_not_found', param: 'event_id' },
  whe: {
    name: 'a webhook endpoint',
    notFound: 'webhook_endpoint_not_found',
    param: 'webhook_endpoint_id',
  },
  aep: { name: 'an authorization endpoint', notFound: 'authorization_endpoint_not_found' },
  rpt: { name: 'a report', notFound: 'report_not_found', param: 'report_id' },
  org: { name: 'an organization', notFound: 'organization_not_found' },
  prog: { name: 'a program', notFound: 'program_not_found' },
  oc: { name: 'a client', notFound: 'client_not_found', param: 'oauth_client_id' },
  usr: { name: 'a user', notFound: 'user_not_found' },
  arl: {
    name: 'an authorization rule',
    notFound: 'authorization_rule_not_found',
    param: 'authorization_rule_id',
  },
  arb: {
    name: 'an authorization rule backtest',
    notFound: 'authorization_rule_backtest_not_found',
    param: 'backtest_id',
  },
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
 * When the path's id that a not-found is about (its parameter: `card_id` for `card_not_found`) is an id of another
 * kind (`GET /v1/cards/chd_…`), the sentence that says so: "chd_… is a cardholder id; this path takes a card id
 * (card_…)". Null otherwise (an id of its own kind, an unknown prefix, a not-found about a body field).
 */
export function idOfAnotherKind(code: ErrorCode, params: unknown): string | null {
  const expected = Object.entries(KINDS).find(([, kind]) => kind.notFound === code)
  if (!expected?.[1].param || !params || typeof params !== 'object') return null
  const [wantPrefix, want] = expected
  const value = (params as Record<string, unknown>)[want.param!]
  if (typeof value !== 'string') return null
  const prefix = PREFIX.exec(value)?.[1]
  const kind = prefix === undefined ? undefined : KINDS[prefix]
  if (prefix === wantPrefix || kind === undefined) return null
  return `${value} is ${kind.name} id; this path takes ${want.name} id (${wantPrefix}_…).`
}
