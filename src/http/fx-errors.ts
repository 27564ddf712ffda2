import { isFxError } from '../lib/fx.js'
import { ApiError } from './errors.js'

/**
 * An FX refusal (`src/lib/fx.ts`: a bad rate, an unknown currency, an amount whose conversion overflows) as the
 * API answers it: `400 invalid_parameter` naming the parameter. Anything else is rethrown as it is.
 */
export function fxRefusal(err: unknown): never {
  if (isFxError(err))
    throw new ApiError('invalid_parameter', { param: err.param, message: err.message })
  throw err
}
