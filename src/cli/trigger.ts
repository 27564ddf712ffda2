import type { Svc } from '@svc/sdk'
import { knownCurrency } from '../lib/currencies.js'
import { decimalAmount } from '../lib/money-format.js'

/** What a trigger built, step by step; later steps reuse earlier objects. */
interface Built {
  /** The merchant's currency of spends (`--currency`): the account's (USD) unless told; others convert. */
  currency?: string
  cardholder?: { id: string }
  account?: { id: string }
  card?: { id: string }
  authorization?: { id: string }
  transaction?: { id: string }
  order?: { id: string }
  dispute?: { id: string }
  esim?: { id: string }
  pkg?: { id: string; data_mb: number | null; top_up_ids: string[] }
}

type Step = (svc: Svc, built: Built, log: (line: string) => void) => Promise<{ id: string }>

const ADDRESS = { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'USA' }
const MERCHANT = { name: 'svc trigger', mcc: '5814', city: 'Springfield', country: 'USA' }
/** `2500, 'USD'` as `25.00 USD`. */
const money = (minor: number, currency: string) => `${decimalAmount(minor, currency)} ${currency}`
const tag = () => `trigger-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`

const cardholder: Step = async (svc, built, log) => {
  built.cardholder = await svc.cardholders.create({
    type: 'individual',
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: `${tag()}@example.com`,
    address: ADDRESS,
    identity_document: { type: 'passport', number: `P${Date.now() % 1e8}` },
    metadata: { source: 'svc trigger' },
  })
  log(`created cardholder ${built.cardholder.id}`)
  return built.cardholder
}
const approved: Step = async (svc, built, log) => {
  const holder = built.cardholder ?? (await cardholder(svc, built, log))
  await svc.kyc.create(holder.id, {
    status: 'approved',
    provider: 'svc-trigger',
    verified_at: new Date(Date.now() - 60_000).toISOString(),
    identity: { legal_name: 'Ada Lovelace', nationality: 'GBR' },
  })
  log(`approved KYC of ${holder.id}`)
  return holder
}
const account: Step = async (svc, built, log) => {
  const holder = await approved(svc, built, log)
  const programs = await svc.programs.list().toArray()
  const program =
    programs.find((p) => p.processor === 'sim_full' && p.currencies.includes('USD')) ??
    programs.find((p) => p.currencies.includes('USD'))
  if (!program)
    throw new Error(
      'the organization has no sandbox program holding USD: ask the operator for one (svc program create)',
    )
  built.account = await svc.accounts.create({
    program_id: program.id,
    cardholder_id: holder.id,
    currency: 'USD',
  })
  log(`created account ${built.account.id} on program ${program.id}`)
  return built.account
}
const credited: Step = async (svc, built, log) => {
  const acct = built.account ?? (await account(svc, built, log))
  const answer = await svc.accounts.credit(acct.id, { amount: 10_000, description: 'svc trigger' })
  log(`credited ${acct.id} with 100.00 USD`)
  return answer
}
const card: Step = async (svc, built, log) => {
  await credited(svc, built, log)
  built.card = await svc.cards.create({
    cardholder_id: built.cardholder!.id,
    account_id: built.account!.id,
    form_factor: 'virtual',
    card_type: 'prepaid',
    embossed_name: 'ADA LOVELACE',
    delivery_address: { name: 'Ada Lovelace', ...ADDRESS },
  })
  log(`created card ${built.card.id}`)
  return built.card
}
const issued: Step = async (svc, built, log) => {
  const c = built.card ?? (await card(svc, built, log))
  const answer = await svc.simulate.cards.issue(c.id)
  log(`issued card ${c.id} (${answer.status})`)
  return answer
}
const authorization: Step = async (svc, built, log) => {
  const c = await issued(svc, built, log)
  const currency = built.currency ?? 'USD'
  const auth = await svc.simulate.authorizations.create({
    card_id: c.id,
    amount: 2_500,
    currency,
    merchant: currency === 'USD' ? MERCHANT : { ...MERCHANT, city: 'Lisbon', country: 'PRT' },
  })
  built.authorization = auth
  const converted =
    auth.fx === null ? '' : ` (${money(auth.amount, auth.currency)} at ${auth.fx.rate})`
  log(`authorized ${money(2_500, currency)} on ${c.id}${converted}: ${auth.id}`)
  return auth
}

/** A shadow rule on a new card whose one condition never holds: it declines nothing, now or once rules decide. */
const authorizationRule: Step = async (svc, built, log) => {
  const c = built.card ?? (await card(svc, built, log))
  const rule = await svc.authorizationRules.create({
    name: 'svc trigger',
    scope: { level: 'card', ids: [c.id] },
    type: 'condition',
    parameters: { conditions: [{ attribute: 'amount', operator: 'gt', value: 1_000_000_000_000 }] },
    mode: 'shadow',
  })
  log(`created authorization rule ${rule.id} on card ${c.id} (shadow, never declines)`)
  return rule
}

const physical: Step = async (svc, built, log) => {
  await credited(svc, built, log)
  const created = await svc.cards.create({
    cardholder_id: built.cardholder!.id,
    account_id: built.account!.id,
    form_factor: 'physical',
    card_type: 'prepaid',
    embossed_name: 'ADA LOVELACE',
    delivery_address: { name: 'Ada Lovelace', ...ADDRESS },
  })
  log(`created physical card ${created.id}`)
  const answer = await svc.simulate.cards.issue(created.id)
  built.card = answer
  log(`issued card ${created.id} (${answer.status})`)
  return built.card
}
const settled: Step = async (svc, built, log) => {
  if (!built.transaction) {
    const auth = await authorization(svc, built, log)
    built.transaction = await svc.simulate.authorizations.capture(auth.id)
    log(`captured ${auth.id}: ${built.transaction.id}`)
  }
  const answer = await svc.simulate.transactions.settle(built.transaction.id)
  log(`settled ${built.transaction.id}`)
  return answer
}
const dispute: Step = async (svc, built, log) => {
  const txn = await settled(svc, built, log)
  built.dispute = await svc.disputes.create({ transaction_id: txn.id, reason: 'not_received' })
  log(`disputed ${txn.id}: ${built.dispute.id}`)
  return built.dispute
}
const networkToken: Step = async (svc, built, log) => {
  const c = await issued(svc, built, log)
  const token = await svc.simulate.networkTokens.create({
    card_id: c.id,
    wallet: 'apple_pay',
    activate: true,
  })
  log(`tokenized card ${c.id} for apple_pay: ${token.id}`)
  return token
}
const authentication: Step = async (svc, built, log) => {
  const c = await issued(svc, built, log)
  const challenge = await svc.simulate.authentications.create({
    card_id: c.id,
    amount: 4_999,
    currency: 'USD',
    merchant: MERCHANT,
  })
  log(`a checkout asked for 3-D Secure on ${c.id}: ${challenge.id}`)
  return challenge
}
/** A package on sale, preferring one with a data allowance and top-ups (usage and top-up flows need them). */
async function esimPackage(svc: Svc, built: Built): Promise<NonNullable<Built['pkg']>> {
  if (built.pkg) return built.pkg
  const on = (await svc.esim.packages.list({ status: 'on_sale', limit: 100 }).firstPage()).data
  const pkg = on.find((p) => p.data_mb && p.top_up_ids.length) ?? on.find((p) => p.data_mb) ?? on[0]
  if (!pkg) throw new Error('no eSIM package is on sale')
  built.pkg = pkg
  return pkg
}
const esimOrder: Step = async (svc, built, log) => {
  const holder = await cardholder(svc, built, log)
  const pkg = await esimPackage(svc, built)
  const order = await svc.esim.orders.create({
    package_id: pkg.id,
    reference: tag(),
    cardholder_id: holder.id,
  })
  built.order = order
  if (order.esim_id) built.esim = { id: order.esim_id }
  log(`ordered eSIM package ${pkg.id}: ${order.id} (${order.status})`)
  return order
}
const unsettledOrder =
  (outcome: 'completed' | 'failed'): Step =>
  async (svc, built, log) => {
    await svc.simulate.esim.provisioning({ next_outcome: 'timeout', settles_as: outcome })
    log(
      `the simulated network will not answer the next order in time, and settles it as ${outcome}`,
    )
    const holder = await cardholder(svc, built, log)
    const pkg = await esimPackage(svc, built)
    const reference = tag()
    // The order answers 502 processor_unavailable and stays unsettled; a retry would only meet its reference again.
    await svc.esim.orders
      .create({ package_id: pkg.id, reference, cardholder_id: holder.id }, { maxRetries: 0 })
      .catch((err: unknown) => {
        if ((err as { status?: number }).status !== 502) throw err
      })
    const order = (await svc.esim.orders.list({ reference }).firstPage()).data[0]
    if (!order) throw new Error(`the order ${reference} was not recorded`)
    log(`ordered eSIM package ${pkg.id}: ${order.id} (${order.status})`)
    const answer = await svc.simulate.esim.settleOrder(order.id)
    log(`settled order ${order.id}: ${answer.status}`)
    return answer
  }
const esimUsage =
  (share: number, what: string): Step =>
  async (svc, built, log) => {
    await esimOrder(svc, built, log)
    const pkg = built.pkg!
    if (!built.esim) throw new Error(`order ${built.order!.id} has no eSIM yet`)
    if (!pkg.data_mb) throw new Error(`package ${pkg.id} has no data allowance to use up`)
    const used = Math.ceil(pkg.data_mb * share)
    await svc.simulate.esim.usage(built.esim.id, { data_used_mb: used })
    log(`reported ${used} MB used on eSIM ${built.esim.id} (${what})`)
    return built.esim
  }
/** An eSIM just ordered (on the package `esimPackage` picks), for the lifecycle's flows. */
async function freshEsim(
  svc: Svc,
  built: Built,
  log: (line: string) => void,
): Promise<{ id: string }> {
  await esimOrder(svc, built, log)
  if (!built.esim) throw new Error(`order ${built.order!.id} has no eSIM yet`)
  return built.esim
}
const esimThreshold: Step = async (svc, built, log) => {
  const esim = await freshEsim(svc, built, log)
  const pkg = built.pkg!
  if (!pkg.data_mb) throw new Error(`package ${pkg.id} has no data allowance`)
  await svc.esim.esims.update(esim.id, { alert_settings: { usage_thresholds_pct: [50] } })
  const used = Math.ceil(pkg.data_mb * 0.6)
  await svc.simulate.esim.usage(esim.id, { data_used_mb: used })
  log(`set eSIM ${esim.id}'s usage threshold to 50 % and reported ${used} MB used`)
  return esim
}
const esimValidityWarning: Step = async (svc, built, log) => {
  // A package of a week: a warning 720 hours before its end is due at once.
  const on = (await svc.esim.packages.list({ status: 'on_sale', limit: 100 }).firstPage()).data
  const week = on.find((p) => p.validity_days <= 30 && p.data_mb)
  if (week) built.pkg = week
  const esim = await freshEsim(svc, built, log)
  const answer = await svc.esim.esims.update(esim.id, {
    alert_settings: { validity_warning_hours: [720] },
  })
  log(
    `asked for a warning 720 hours before eSIM ${esim.id}'s validity ends (${answer.valid_until})`,
  )
  return esim
}

/** The event types `svc trigger` can cause, each with the sandbox flow that causes it (and the object the event carries). */
export const TRIGGERS: Record<string, Step> = {
  'cardholder.created': cardholder,
  'cardholder.updated': async (svc, built, log) => {
    const holder = await cardholder(svc, built, log)
    const answer = await svc.cardholders.update(holder.id, {
      metadata: { source: 'svc trigger', updated: 'yes' },
    })
    log(`updated cardholder ${holder.id}`)
    return answer
  },
  'cardholder.kyc_updated': approved,
  'account.created': account,
  'account.provisioned': account,
  'account.credited': credited,
  'account.debited': async (svc, built, log) => {
    await credited(svc, built, log)
    const answer = await svc.accounts.debit(built.account!.id, {
      amount: 1_000,
      description: 'svc trigger',
    })
    log(`debited ${built.account!.id} by 10.00 USD`)
    return answer
  },
  'account.blocked': async (svc, built, log) => {
    const acct = await account(svc, built, log)
    const answer = await svc.accounts.block(acct.id, { reason: 'requested' })
    log(`blocked ${acct.id}`)
    return answer
  },
  'account.unblocked': async (svc, built, log) => {
    const acct = await account(svc, built, log)
    await svc.accounts.block(acct.id, { reason: 'requested' })
    const answer = await svc.accounts.unblock(acct.id)
    log(`blocked and unblocked ${acct.id}`)
    return answer
  },
  'card.created': card,
  'card.issued': issued,
  'card.activated': async (svc, built, log) => {
    const c = await physical(svc, built, log)
    const answer = await svc.cards.activate(c.id)
    log(`activated card ${c.id}`)
    return answer
  },
  'card.frozen': async (svc, built, log) => {
    const c = await issued(svc, built, log)
    const answer = await svc.cards.freeze(c.id)
    log(`froze card ${c.id}`)
    return answer
  },
  'card.unfrozen': async (svc, built, log) => {
    const c = await issued(svc, built, log)
    await svc.cards.freeze(c.id)
    const answer = await svc.cards.unfreeze(c.id)
    log(`froze and unfroze card ${c.id}`)
    return answer
  },
  'card.closed': async (svc, built, log) => {
    const c = await issued(svc, built, log)
    const answer = await svc.cards.close(c.id)
    log(`closed card ${c.id}`)
    return answer
  },
  'card.replaced': async (svc, built, log) => {
    const c = await issued(svc, built, log)
    const replacement = await svc.cards.replace(c.id, { reason: 'lost' })
    log(`replaced card ${c.id} as lost: ${replacement.id}`)
    return c
  },
  'card.updated': async (svc, built, log) => {
    const c = await issued(svc, built, log)
    const answer = await svc.cards.update(c.id, { metadata: { trigger: 'card.updated' } })
    log(`updated the metadata of card ${c.id}`)
    return answer
  },
  'card.shipped': async (svc, built, log) => {
    const c = await physical(svc, built, log)
    const answer = await svc.simulate.cards.ship(c.id, { status: 'shipped' })
    log(`shipped card ${c.id}`)
    return answer
  },
  'authorization_rule.created': authorizationRule,
  'authorization_rule.updated': async (svc, built, log) => {
    const rule = await authorizationRule(svc, built, log)
    const answer = await svc.authorizationRules.update(rule.id, { name: 'svc trigger, renamed' })
    log(`renamed authorization rule ${rule.id}`)
    return answer
  },
  'authorization_rule.deleted': async (svc, built, log) => {
    const rule = await authorizationRule(svc, built, log)
    await svc.authorizationRules.del(rule.id)
    log(`deleted authorization rule ${rule.id}`)
    return rule
  },
  'authorization.created': authorization,
  'authorization.updated': async (svc, built, log) => {
    const auth = await authorization(svc, built, log)
    const answer = await svc.simulate.authorizations.increment(auth.id, { amount: 500 })
    log(`incremented ${auth.id} by ${money(500, built.currency ?? 'USD')}`)
    return answer
  },
  'transaction.created': async (svc, built, log) => {
    const auth = await authorization(svc, built, log)
    built.transaction = await svc.simulate.authorizations.capture(auth.id)
    log(`captured ${auth.id}: ${built.transaction.id}`)
    return built.transaction
  },
  'transaction.updated': settled,
  'dispute.created': dispute,
  'dispute.updated': async (svc, built, log) => {
    const d = await dispute(svc, built, log)
    const answer = await svc.simulate.disputes.resolve(d.id, { outcome: 'won' })
    log(`resolved dispute ${d.id}: won`)
    return answer
  },
  'sandbox_clock.created': async (svc, _built, log) => {
    const clock = await svc.simulate.clocks.create({ name: 'made by svc trigger' })
    log(`created sandbox clock ${clock.id} at ${clock.frozen_time}`)
    return clock
  },
  'sandbox_clock.ready': async (svc, _built, log) => {
    const clock = await svc.simulate.clocks.create({ name: 'made by svc trigger' })
    const ready = await svc.simulate.clocks.advance(clock.id, { by: 'P1D' })
    log(`advanced sandbox clock ${clock.id} by a day, to ${ready.frozen_time}`)
    return ready
  },
  'sandbox_clock.deleted': async (svc, _built, log) => {
    const clock = await svc.simulate.clocks.create({ name: 'made by svc trigger' })
    await svc.simulate.clocks.del(clock.id)
    log(`created and deleted sandbox clock ${clock.id}`)
    return clock
  },
  'network_token.created': networkToken,
  'network_token.updated': async (svc, built, log) => {
    const token = await networkToken(svc, built, log)
    const answer = await svc.networkTokens.suspend(token.id)
    log(`suspended network token ${token.id}`)
    return answer
  },
  'authentication.created': authentication,
  'authentication.updated': async (svc, built, log) => {
    const challenge = await authentication(svc, built, log)
    const answer = await svc.authentications.approve(challenge.id)
    log(`approved 3-D Secure challenge ${challenge.id}`)
    return answer
  },
  'esim_order.created': esimOrder,
  'esim_order.settled': unsettledOrder('completed'),
  'esim_order.failed': unsettledOrder('failed'),
  'esim.topped_up': async (svc, built, log) => {
    await esimOrder(svc, built, log)
    const pkg = built.pkg!
    if (!built.esim) throw new Error(`order ${built.order!.id} has no eSIM yet`)
    if (!pkg.top_up_ids.length) throw new Error(`package ${pkg.id} has no top-ups`)
    const order = await svc.esim.topUps.create(built.esim.id, {
      top_up_id: pkg.top_up_ids[0],
      reference: tag(),
    })
    log(`topped up eSIM ${built.esim.id} with ${pkg.top_up_ids[0]}: ${order.id}`)
    return built.esim
  },
  'esim.auto_top_up_failed': async (svc, built, log) => {
    await esimOrder(svc, built, log)
    const pkg = built.pkg!
    if (!built.esim) throw new Error(`order ${built.order!.id} has no eSIM yet`)
    if (!pkg.data_mb || !pkg.top_up_ids.length)
      throw new Error(`package ${pkg.id} has no data allowance or no top-ups`)
    // An account of the eSIM's cardholder with nothing on it: the top-up the depletion starts cannot be paid.
    const empty = await account(svc, built, log)
    await svc.esim.esims.setAutoTopUp(built.esim.id, {
      top_up_id: pkg.top_up_ids[0],
      account_id: empty.id,
      trigger: 'depleted',
      max_per_month: 3,
    })
    log(`turned on auto top-up of eSIM ${built.esim.id} from the empty account ${empty.id}`)
    await svc.simulate.esim.usage(built.esim.id, { data_used_mb: pkg.data_mb })
    log(`reported ${pkg.data_mb} MB used on eSIM ${built.esim.id} (the whole package)`)
    return built.esim
  },
  'esim.low_data': esimUsage(0.85, 'past 80 % of the package'),
  'esim.depleted': esimUsage(1, 'the whole package'),
  'esim.usage_threshold_reached': esimThreshold,
  'esim.validity_expiring': esimValidityWarning,
  'esim.installed': async (svc, built, log) => {
    const esim = await freshEsim(svc, built, log)
    const answer = await svc.simulate.esim.install(esim.id)
    log(`installed eSIM ${esim.id} on a device (${answer.status})`)
    return answer
  },
  'esim.first_used': esimUsage(0.1, 'its first data'),
  'esim.country_changed': async (svc, built, log) => {
    const esim = await freshEsim(svc, built, log)
    const answer = await svc.simulate.esim.location(esim.id, { country: 'JPN' })
    log(`moved eSIM ${esim.id} to ${answer.country}`)
    return answer
  },
  'esim.canceled': async (svc, built, log) => {
    const esim = await freshEsim(svc, built, log)
    const answer = await svc.esim.esims.cancel(esim.id)
    log(`canceled eSIM ${esim.id} before any use (${answer.status}); its order is refunded`)
    return answer
  },
  'esim.updated': async (svc, built, log) => {
    const esim = await freshEsim(svc, built, log)
    const answer = await svc.esim.esims.suspend(esim.id)
    log(`suspended eSIM ${esim.id} at the network (${answer.status})`)
    return answer
  },
  'webhook_endpoint.test': async (svc, built, log) => {
    const mine = (await svc.webhookEndpoints.list({ limit: 100 }).firstPage()).data
    const endpoint =
      mine.find((e) => e.status === 'enabled') ??
      mine[0] ??
      (await svc.webhookEndpoints.create({
        url: 'https://example.com/svc-trigger',
        enabled_events: ['webhook_endpoint.disabled'],
        description: 'made by svc trigger',
      }))
    await svc.webhookEndpoints.sendTest(endpoint.id)
    log(`sent a test event to webhook endpoint ${endpoint.id} (${endpoint.url})`)
    return endpoint
  },
}

/** What `svc trigger --list` prints: one event type a line, in catalogue order. */
export const TRIGGER_LIST = `${Object.keys(TRIGGERS).join('\n')}\n`

export const TRIGGER_HELP = `svc trigger EVENT_TYPE [--currency EUR] [--client-file F] [--base-url URL]
svc trigger --list
  Runs a sandbox flow through the API (as the organization of the client file) that causes EVENT_TYPE, and prints
  each step and the event's id. --list prints the types it can cause, one a line. --currency: the card (on a USD
  account) spends in that merchant currency, converted at the sandbox rate (authorization.* and transaction.*).
  Supported types:
${Object.keys(TRIGGERS)
  .map((type) => `    ${type}`)
  .join('\n')}
`

/** Runs the flow of `type`; answers the id of the event it caused (the newest of that type about the object it made). */
export async function trigger(
  svc: Svc,
  type: string,
  log: (line: string) => void,
  options: { currency?: string } = {},
): Promise<string | null> {
  const step = TRIGGERS[type]
  if (!step) throw new Error(`svc trigger cannot cause ${JSON.stringify(type)}.\n\n${TRIGGER_HELP}`)
  const currency = options.currency?.toUpperCase()
  if (currency !== undefined && !knownCurrency(currency))
    throw new Error(`--currency ${options.currency} is not an ISO 4217 currency svc knows.`)
  const object = await step(svc, { currency }, log)
  const recent = await svc.events.list({ type, limit: 20 }).firstPage()
  return recent.data.find((e) => (e.data.object as { id?: string }).id === object.id)?.id ?? null
}
