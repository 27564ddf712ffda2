import type { Svc } from '../../sdk/src/index.js'

/** What a trigger built, step by step; later steps reuse earlier objects. */
interface Built {
  cardholder?: { id: string }
  account?: { id: string }
  card?: { id: string }
  authorization?: { id: string }
  transaction?: { id: string }
  order?: { id: string }
}

type Step = (svc: Svc, built: Built, log: (line: string) => void) => Promise<{ id: string }>

const ADDRESS = { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'USA' }
const MERCHANT = { name: 'svc trigger', mcc: '5814', city: 'Springfield', country: 'USA' }
const tag = () => `trigger-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`

const cardholder: Step = async (svc, built, log) => {
  built.cardholder = await svc.cardholders.create({
    type: 'individual', first_name: 'Ada', last_name: 'Lovelace', email: `${tag()}@example.com`, address: ADDRESS,
    identity_document: { type: 'passport', number: `P${Date.now() % 1e8}` }, metadata: { source: 'svc trigger' },
  })
  log(`created cardholder ${built.cardholder.id}`)
  return built.cardholder
}
const approved: Step = async (svc, built, log) => {
  const holder = built.cardholder ?? await cardholder(svc, built, log)
  await svc.kyc.create(holder.id, {
    status: 'approved', provider: 'svc-trigger', verified_at: new Date(Date.now() - 60_000).toISOString(),
    identity: { legal_name: 'Ada Lovelace', nationality: 'GBR' },
  })
  log(`approved KYC of ${holder.id}`)
  return holder
}
const account: Step = async (svc, built, log) => {
  const holder = await approved(svc, built, log)
  const programs = await svc.programs.list().toArray()
  const program = programs.find((p) => p.processor === 'sim_full' && p.currencies.includes('USD')) ?? programs.find((p) => p.currencies.includes('USD'))
  if (!program) throw new Error('the organization has no sandbox program holding USD: ask the operator for one (svc program create)')
  built.account = await svc.accounts.create({ program_id: program.id, cardholder_id: holder.id, currency: 'USD' })
  log(`created account ${built.account.id} on program ${program.id}`)
  return built.account
}
const credited: Step = async (svc, built, log) => {
  const acct = built.account ?? await account(svc, built, log)
  const answer = await svc.accounts.credit(acct.id, { amount: 10_000, description: 'svc trigger' })
  log(`credited ${acct.id} with 100.00 USD`)
  return answer
}
const card: Step = async (svc, built, log) => {
  await credited(svc, built, log)
  built.card = await svc.cards.create({
    cardholder_id: built.cardholder!.id, account_id: built.account!.id, form_factor: 'virtual', card_type: 'prepaid', embossed_name: 'ADA LOVELACE',
    delivery_address: { name: 'Ada Lovelace', ...ADDRESS },
  })
  log(`created card ${built.card.id}`)
  return built.card
}
const issued: Step = async (svc, built, log) => {
  const c = built.card ?? await card(svc, built, log)
  const answer = await svc.simulate.cards.issue(c.id)
  log(`issued card ${c.id} (${answer.status})`)
  return answer
}
const authorization: Step = async (svc, built, log) => {
  const c = await issued(svc, built, log)
  built.authorization = await svc.simulate.authorizations.create({ card_id: c.id, amount: 2_500, currency: 'USD', merchant: MERCHANT })
  log(`authorized 25.00 USD on ${c.id}: ${built.authorization.id}`)
  return built.authorization
}

/** The event types `svc trigger` can cause, each with the sandbox flow that causes it (and the object the event carries). */
export const TRIGGERS: Record<string, Step> = {
  'cardholder.created': cardholder,
  'cardholder.updated': async (svc, built, log) => {
    const holder = await cardholder(svc, built, log)
    const answer = await svc.cardholders.update(holder.id, { metadata: { source: 'svc trigger', updated: 'yes' } })
    log(`updated cardholder ${holder.id}`)
    return answer
  },
  'cardholder.kyc_updated': approved,
  'account.created': account,
  'account.credited': credited,
  'account.debited': async (svc, built, log) => {
    await credited(svc, built, log)
    const answer = await svc.accounts.debit(built.account!.id, { amount: 1_000, description: 'svc trigger' })
    log(`debited ${built.account!.id} by 10.00 USD`)
    return answer
  },
  'account.blocked': async (svc, built, log) => {
    const acct = await account(svc, built, log)
    const answer = await svc.accounts.block(acct.id, { reason: 'requested' })
    log(`blocked ${acct.id}`)
    return answer
  },
  'card.created': card,
  'card.issued': issued,
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
  'authorization.created': authorization,
  'transaction.created': async (svc, built, log) => {
    const auth = await authorization(svc, built, log)
    built.transaction = await svc.simulate.authorizations.capture(auth.id)
    log(`captured ${auth.id}: ${built.transaction.id}`)
    return built.transaction
  },
  'esim_order.created': async (svc, built, log) => {
    const holder = await cardholder(svc, built, log)
    const pkg = (await svc.esim.packages.list({ status: 'on_sale', limit: 1 }).firstPage()).data[0]
    if (!pkg) throw new Error('no eSIM package is on sale')
    built.order = await svc.esim.orders.create({ package_id: pkg.id, reference: tag(), cardholder_id: holder.id })
    log(`ordered eSIM package ${pkg.id}: ${built.order.id}`)
    return built.order
  },
}

export const TRIGGER_HELP = `svc trigger EVENT_TYPE [--client-file F] [--base-url URL]
  Runs a sandbox flow through the API (as the organization of the client file) that causes EVENT_TYPE, and prints
  each step and the event's id. Supported types:
${Object.keys(TRIGGERS).map((type) => `    ${type}`).join('\n')}
`

/** Runs the flow of `type`; answers the id of the event it caused (the newest of that type about the object it made). */
export async function trigger(svc: Svc, type: string, log: (line: string) => void): Promise<string | null> {
  const step = TRIGGERS[type]
  if (!step) throw new Error(`svc trigger cannot cause ${JSON.stringify(type)}.\n\n${TRIGGER_HELP}`)
  const object = await step(svc, {}, log)
  const recent = await svc.events.list({ type, limit: 20 }).firstPage()
  return recent.data.find((e) => (e.data.object as { id?: string }).id === object.id)?.id ?? null
}
