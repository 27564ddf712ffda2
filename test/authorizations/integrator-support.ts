import assert from 'node:assert/strict'
import type { TestApp } from '../helpers/app.js'
import type { Received, Receiver } from '../webhooks/helpers.js'

export { startReceiver } from '../webhooks/helpers.js'
export type { Received, Receiver }

/** Registers the scope's authorization endpoint; answers it (with its secret). */
export async function putEndpoint(
  t: TestApp,
  token: string,
  body: Record<string, unknown>,
): Promise<any> {
  const res = await t.api(token, 'PUT', '/v1/authorization_endpoint', body)
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

/** The receiver answers every request with this JSON body (status 200 unless given). */
export function answerWith(receiver: Receiver, body: unknown, status = 200): void {
  receiver.respond = () => ({
    status,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

/** The receiver holds every answer this long before approving (a slow integrator). */
export function answerAfter(receiver: Receiver, ms: number): void {
  receiver.respond = () =>
    new Promise((resolve) =>
      setTimeout(() => resolve({ status: 200, body: '{"approved":true}' }), ms),
    )
}

/** The scope's attempt log, newest first. */
export async function attempts(t: TestApp, token: string): Promise<any[]> {
  const res = await t.api(token, 'GET', '/v1/authorization_endpoint/attempts?limit=100')
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data
}

export function requestsAbout(receiver: Receiver, authorizationId: string): Received[] {
  return receiver.received.filter((r) => r.body?.data?.object?.id === authorizationId)
}
