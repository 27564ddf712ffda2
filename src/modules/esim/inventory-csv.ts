/** A blank profile as the operator loads it into stock. */
export interface ProfileLine {
  iccid: string
  smdp_address: string
  matching_id: string
}

export class InventoryCsvError extends Error {}

const HEADER = ['iccid', 'smdp_address', 'matching_id']

/**
 * Parses the operator's stock file: `iccid,smdp_address,matching_id` per line, an optional header line with
 * those names, blank lines ignored. Fields hold no commas or quotes (ICCIDs, host names and matching ids never do),
 * so a line with any other shape is refused with its line number rather than guessed at.
 */
export function parseInventoryCsv(text: string): ProfileLine[] {
  const out: ProfileLine[] = []
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim()
    if (line === '') return
    const fields = line.split(',').map((f) => f.trim())
    if (index === 0 && fields.join(',').toLowerCase() === HEADER.join(',')) return
    if (fields.length !== 3 || fields.some((f) => f === '' || f.includes('"'))) {
      throw new InventoryCsvError(`line ${index + 1}: expected iccid,smdp_address,matching_id`)
    }
    const [iccid, smdp_address, matching_id] = fields
    out.push({ iccid, smdp_address, matching_id })
  })
  return out
}

/** Splits profiles into batches the operator API accepts in one call. */
export function inBatches<T>(items: T[], size = 10_000): T[][] {
  const batches: T[][] = []
  for (let i = 0; i < items.length; i += size) batches.push(items.slice(i, i + size))
  return batches
}
