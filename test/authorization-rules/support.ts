import assert from 'node:assert/strict'
import type { TestApp } from '../helpers/app.js'

/** Creates a rule (201) and answers it. */
export async function createRule(
  t: TestApp,
  token: string,
  body: Record<string, unknown>,
): Promise<any> {
  const res = await t.api(token, 'POST', '/v1/authorization_rules', {
    name: 'A rule',
    mode: 'active',
    ...body,
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/** A rule on one card. */
export function onCard(cardId: string): { level: 'card'; ids: string[] } {
  return { level: 'card', ids: [cardId] }
}

/** A condition rule declining when every condition holds. */
export function condition(...conditions: [string, string, unknown][]): Record<string, unknown> {
  return {
    type: 'condition',
    parameters: {
      conditions: conditions.map(([attribute, operator, value]) => ({
        attribute,
        operator,
        value,
      })),
    },
  }
}

export async function patchRule(
  t: TestApp,
  token: string,
  id: string,
  body: Record<string, unknown>,
): Promise<any> {
  const res = await t.api(token, 'PATCH', `/v1/authorization_rules/${id}`, body)
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}
