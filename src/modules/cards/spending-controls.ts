import { ApiError } from '../../http/errors.js'
import type { SpendControlSupport } from '../../processors/port.js'
import type { SPENDING_INTERVALS } from './schemas.js'

export type SpendingInterval = (typeof SPENDING_INTERVALS)[number]

/** The stored and returned form: every key present, an empty list meaning "no rule of this kind". */
export interface SpendingControlsValue {
  spending_limits: { amount: number; interval: SpendingInterval }[]
  allowed_mccs: string[]
  blocked_mccs: string[]
  allowed_countries: string[]
  blocked_countries: string[]
}

export type SpendingControlsInput = Partial<SpendingControlsValue>

export const LIST_CONTROLS = [
  'allowed_mccs',
  'blocked_mccs',
  'allowed_countries',
  'blocked_countries',
] as const

export function emptySpendingControls(): SpendingControlsValue {
  return {
    spending_limits: [],
    allowed_mccs: [],
    blocked_mccs: [],
    allowed_countries: [],
    blocked_countries: [],
  }
}

/**
 * Merges supplied keys over the current controls (a supplied key replaces that key), normalizes codes and
 * refuses contradictions: one limit per interval, allowed and blocked lists of one kind not both set.
 */
export function mergeSpendingControls(
  current: SpendingControlsValue,
  input: SpendingControlsInput | undefined,
  param = 'spending_controls',
): SpendingControlsValue {
  const out: SpendingControlsValue = { ...current }
  if (!input) return out
  if (input.spending_limits !== undefined) {
    const seen = new Set<string>()
    for (const limit of input.spending_limits) {
      if (seen.has(limit.interval)) {
        throw new ApiError('invalid_parameter', {
          param: `${param}.spending_limits`,
          message: `Only one spending limit per interval; ${limit.interval} appears twice.`,
        })
      }
      seen.add(limit.interval)
    }
    out.spending_limits = input.spending_limits.map((l) => ({
      amount: l.amount,
      interval: l.interval,
    }))
  }
  for (const key of LIST_CONTROLS) {
    const list = input[key]
    if (list === undefined) continue
    out[key] = [...new Set(list.map((v) => v.toUpperCase()))]
  }
  for (const [allowed, blocked] of [
    ['allowed_mccs', 'blocked_mccs'],
    ['allowed_countries', 'blocked_countries'],
  ] as const) {
    if (out[allowed].length > 0 && out[blocked].length > 0) {
      throw new ApiError('invalid_parameter', {
        param: `${param}.${allowed}`,
        message: `Set either ${allowed} or ${blocked}, not both.`,
      })
    }
  }
  return out
}

/**
 * The first requested control the processor cannot enforce upstream, as `spend_control_unsupported`.
 * Only controls that carry a rule count: an empty list asks for nothing.
 */
export function assertSpendControlsSupported(
  controls: SpendingControlsValue,
  support: SpendControlSupport,
  param = 'spending_controls',
): void {
  for (const limit of controls.spending_limits) {
    if (!support.intervals.includes(limit.interval)) {
      throw new ApiError('spend_control_unsupported', {
        param: `${param}.spending_limits`,
        message: `This program's processor cannot enforce ${limit.interval} spending limits; it supports: ${support.intervals.join(', ') || 'none'}.`,
      })
    }
  }
  for (const key of LIST_CONTROLS) {
    if (controls[key].length > 0 && !support.lists.includes(key)) {
      throw new ApiError('spend_control_unsupported', {
        param: `${param}.${key}`,
        message: `This program's processor cannot enforce ${key}; it supports: ${[...support.lists].join(', ') || 'no list controls'}.`,
      })
    }
  }
}
