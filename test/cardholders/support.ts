import assert from 'node:assert/strict'
import type { LightMyRequestResponse } from 'fastify'
import type { TestApp } from '../helpers/app.js'

export { eventsOf, expectError } from '../helpers/api.js'

let counter = 0

/** A valid create body with a unique email and phone number; fields can be overridden or (undefined) removed. */
export function cardholderBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  counter++
  const n = `${process.pid}${counter}`.slice(-9).padStart(9, '0')
  const body: Record<string, unknown> = {
    type: 'individual',
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: `ada.${process.pid}.${counter}@example.com`,
    phone_number: `+1415${n.slice(-7)}`,
    reference: `ref-${counter}`,
    address: { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'USA' },
    ...overrides,
  }
  for (const [k, v] of Object.entries(body)) if (v === undefined) delete body[k]
  return body
}

/** Creates a cardholder and returns its REST object; fails the test unless the answer is 201. */
export async function createCardholder(
  t: TestApp,
  token: string,
  overrides: Record<string, unknown> = {},
): Promise<any> {
  const res = await t.api(token, 'POST', '/v1/cardholders', cardholderBody(overrides))
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/** The response body without its per-request id, to compare two error answers. */
export function withoutRequestId(res: LightMyRequestResponse): unknown {
  const body = res.json()
  if (body?.error) delete body.error.request_id
  return { status: res.statusCode, body }
}
