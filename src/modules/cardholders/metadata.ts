import { ApiError } from '../../http/errors.js'

export const METADATA_MAX_KEYS = 20

/** Applies an update to held metadata (keys merged, null or "" removes one) and enforces the key limit on the result. */
export function mergeMetadata(
  held: Record<string, string>,
  patch: Record<string, string | null>,
  param = 'metadata',
): Record<string, string> {
  const out: Record<string, string> = { ...held }
  for (const [key, value] of Object.entries(patch)) {
    if (value === null || value === '') delete out[key]
    else out[key] = value
  }
  if (Object.keys(out).length > METADATA_MAX_KEYS) {
    throw new ApiError('invalid_parameter', {
      param,
      message: `metadata can hold at most ${METADATA_MAX_KEYS} keys.`,
    })
  }
  return out
}

/** Key-order-insensitive equality of two metadata maps, to tell whether an update changed anything. */
export function sameMetadata(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a)
  return (
    ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && a[k] === b[k])
  )
}
