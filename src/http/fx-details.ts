import { Type } from 'typebox'
import { convert } from '../lib/fx.js'

/**
 * How an amount in one currency became an amount in another (decisions.md, "Spending in any currency"): the rate
 * (quote per base, a decimal string), the program's markup, the markup's part of the converted amount, who gave the
 * rate and when. Null on an object whose two currencies are the same.
 */
export const FxDetails = Type.Object(
  {
    rate: Type.String({
      description: 'Units of the converted-into currency per unit of the other, a decimal string',
    }),
    markup_bps: Type.Integer({
      minimum: 0,
      maximum: 1000,
      description: "The program's markup, in basis points",
    }),
    fee_amount: Type.Integer({
      description:
        "The markup's part of the converted amount, in its minor units (0 without markup)",
    }),
    source: Type.Union([Type.Literal('network'), Type.Literal('sandbox')], {
      description: 'Who gave the rate: the card network, or the sandbox rate table',
    }),
    rate_at: Type.String({ format: 'date-time', description: 'When the rate was given' }),
  },
  {
    title: 'FxDetails',
    additionalProperties: false,
    examples: [
      {
        rate: '1.0825',
        markup_bps: 200,
        fee_amount: 64,
        source: 'sandbox',
        rate_at: '2026-11-02T09:30:00.000Z',
      },
    ],
  },
)

/** The stored and presented form of `FxDetails`. */
export interface FxDetailsValue {
  rate: string
  markup_bps: number
  fee_amount: number
  source: 'network' | 'sandbox'
  rate_at: string
}

/** A rate as a processor quotes it (`FxQuote` of the processor port). */
export interface QuotedRate {
  rate: string
  source: 'network' | 'sandbox'
  rateAt: Date
}

/**
 * Converts `amount` of `from` into `to` at a quoted rate with a markup (`convert`, which throws a typed
 * `FxError`): the converted amount and the `fx` record that says how.
 */
export function convertAtQuote(
  quote: QuotedRate,
  input: { amount: number; from: string; to: string; markupBps: number },
): { amount: number; fx: FxDetailsValue } {
  const out = convert({ ...input, rate: quote.rate })
  return {
    amount: out.amount,
    fx: {
      rate: quote.rate,
      markup_bps: input.markupBps,
      fee_amount: out.feeAmount,
      source: quote.source,
      rate_at: quote.rateAt.toISOString(),
    },
  }
}
