import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { EsimView } from '../../src/modules/esim/index.js'
import { alertsOf } from '../../src/modules/h5/service.js'

/**
 * What the traveller page tells of an eSIM's alerts (docs/esim.md, "Hosted page (H5)"): the highest usage threshold
 * its current package has reached, and the hours left once its validity ends within a warning, by the eSIM's own
 * settings where it has them, else the organization's.
 */

const NOW = new Date('2026-11-29T12:00:00Z')
const ORG = { usage_thresholds_pct: [50, 80, 100], validity_warning_hours: [24] }

function esim(usedMb: number, hoursLeft: number, own: EsimView['alert_settings'] = null): EsimView {
  const validUntil = new Date(NOW.getTime() + hoursLeft * 3_600_000).toISOString()
  return {
    valid_until: validUntil,
    alert_settings: own,
    packages: [
      { status: 'expired', data_mb: 100, data_used_mb: 100 },
      { status: 'running', data_mb: 1000, data_used_mb: usedMb, expires_at: validUntil },
    ],
  } as unknown as EsimView
}

test('the highest threshold the running package has reached, by the organization settings', () => {
  assert.deepEqual(alertsOf(esim(400, 100), ORG, NOW), { reachedPct: null, endsInHours: null })
  assert.equal(alertsOf(esim(500, 100), ORG, NOW).reachedPct, 50)
  assert.equal(alertsOf(esim(850, 100), ORG, NOW).reachedPct, 80)
  assert.equal(alertsOf(esim(1000, 100), ORG, NOW).reachedPct, 100)
})

test("the hours left once the validity ends within a warning, none after it ended; the eSIM's own settings win", () => {
  assert.equal(alertsOf(esim(0, 25), ORG, NOW).endsInHours, null)
  assert.equal(alertsOf(esim(0, 23.5), ORG, NOW).endsInHours, 24)
  assert.equal(alertsOf(esim(0, -1), ORG, NOW).endsInHours, null)
  const own = { usage_thresholds_pct: [25], validity_warning_hours: [72] }
  assert.deepEqual(alertsOf(esim(300, 60, own), ORG, NOW), { reachedPct: 25, endsInHours: 60 })
  // Only the field it sets is its own: the other stays the organization's.
  const half = { usage_thresholds_pct: null, validity_warning_hours: [72] }
  assert.deepEqual(alertsOf(esim(850, 60, half), ORG, NOW), { reachedPct: 80, endsInHours: 60 })
})
