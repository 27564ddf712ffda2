import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertCalled, guideApp, runGuide } from './support.js'

const app = guideApp()

test('docs/guides/limit-spending.md runs as written: every call answers as the guide shows', async () => {
  const { t, token } = app
  const run = await runGuide(t, token, 'docs/guides/limit-spending.md')
  assertCalled(run, [
    'POST /v1/authorization_rules',
    'GET /v1/authorization_rules/{id}',
    'PATCH /v1/authorization_rules/{id}',
    'DELETE /v1/authorization_rules/{id}',
    'POST /v1/simulate/authorizations',
    'GET /v1/cards/{id}/spend_limits',
  ])

  // The rule the guide made is the one that watched, then declined: its own id, on the card's authorizations.
  const rule = run.vars.get('RULE')!
  const card = run.vars.get('CARD')!
  const list = await t.api(await token(), 'GET', `/v1/authorizations?card_id=${card}`)
  const oldestFirst = (list.json().data as any[]).reverse()
  assert.deepEqual(
    oldestFirst.map((a) => [a.approved, a.rule_results.map((r: any) => r.outcome).join()]),
    [
      [true, 'passed'],
      [true, 'passed'],
      [true, 'would_decline'],
      [false, 'declined'],
      [true, ''],
    ],
  )
  assert.equal(oldestFirst[3].rule_id, rule)
  assert.ok(oldestFirst.slice(0, 4).every((a) => a.rule_results[0].rule_id === rule))
  // Deleted: no longer there.
  assert.equal(
    (await t.api(await token(), 'GET', `/v1/authorization_rules/${rule}`)).statusCode,
    404,
  )
})
