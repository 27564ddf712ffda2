// Objects made through the API for the scale benchmarks: the templates the seed copies (a webhook endpoint, an
// approved cardholder, accounts, cards, authorizations and the events they emit) and funded active cards.
import { randomBytes } from 'node:crypto'
import type { BenchClient, BenchServer } from './platform-harness.js'

/** One API call with a bearer token; anything but 2xx throws with the answer. */
export async function call(
  server: BenchServer,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<any> {
  const res = await fetch(server.baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const json = await res.json()
  if (res.status >= 300)
    throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(json)}`)
  return json
}

async function inParallel(
  count: number,
  width: number,
  task: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await task(next++)
    }),
  )
}

/** What both databases get through the API: the templates the seed copies, and funded cards for authorizations. */
export interface Made {
  cardholderId: string
  accountId: string
  cardId: string
  endpointId: string
  cards: string[]
  accounts: string[]
}

export async function makeThroughApi(
  server: BenchServer,
  client: BenchClient,
  token: string,
  apiCards: number,
): Promise<Made> {
  const c = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    call(server, token, method, path, body, headers)
  const endpoint = await c('POST', '/v1/webhook_endpoints', {
    url: 'https://hooks.example.com/svc',
    enabled_events: ['*'],
  })
  const holder = await c('POST', '/v1/cardholders', {
    type: 'individual',
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: `ada.${randomBytes(4).toString('hex')}@example.com`,
    address: { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'USA' },
    identity_document: { type: 'passport', number: 'P1234567' },
  })
  await c('POST', `/v1/cardholders/${holder.id}/kyc`, {
    status: 'approved',
    provider: 'bench',
    verified_at: new Date(Date.now() - 60_000).toISOString(),
  })
  const cards: string[] = []
  const accounts: string[] = []
  await inParallel(apiCards, 8, async () => {
    const account = await c('POST', '/v1/accounts', {
      program_id: client.programIds[0],
      cardholder_id: holder.id,
      currency: 'USD',
    })
    await c(
      'POST',
      `/v1/accounts/${account.id}/credit`,
      { amount: 1_000_000_000_000 },
      { 'idempotency-key': `fund-${account.id}` },
    )
    const card = await c('POST', '/v1/cards', {
      cardholder_id: holder.id,
      account_id: account.id,
      form_factor: 'virtual',
      card_type: 'prepaid',
      embossed_name: 'ADA LOVELACE',
      delivery_address: {
        name: 'Ada Lovelace',
        line1: '1 Main St',
        city: 'Springfield',
        postal_code: '12345',
        country: 'USA',
      },
    })
    await c('POST', `/v1/simulate/cards/${card.id}/issue`)
    cards.push(card.id)
    accounts.push(account.id)
  })
  const auth = await c('POST', '/v1/simulate/authorizations', {
    card_id: cards[0],
    amount: 4000,
    currency: 'USD',
    merchant: { name: 'Corner Cafe', mcc: '5814', country: 'USA' },
  })
  await c('POST', `/v1/simulate/authorizations/${auth.id}/capture`, {})
  await c('POST', '/v1/simulate/authorizations', {
    card_id: cards[0],
    amount: 1250,
    currency: 'USD',
    merchant: { name: 'Grocer', mcc: '5411', country: 'GBR' },
  })
  const firstCard = await c('GET', `/v1/cards/${cards[0]}`)
  return {
    cardholderId: holder.id,
    accountId: firstCard.account_id,
    cardId: cards[0],
    endpointId: endpoint.id,
    cards,
    accounts,
  }
}
