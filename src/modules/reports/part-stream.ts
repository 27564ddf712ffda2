import { Readable } from 'node:stream'
import type { Db } from '../../db/types.js'
import * as repo from './repo.js'

/**
 * A succeeded report's CSV as a stream of its parts in `seq` order, one query per part, the next one only
 * once the previous has been consumed: a download holds about one part in memory whatever the file's size.
 * Nothing is read until the first consumer asks. Parts that do not add up to `sizeBytes` end the stream with
 * an error, so a client sees a cut connection instead of a short file that looks complete.
 */
export function partStream(
  db: Db,
  reportId: string,
  generation: string,
  sizeBytes: number,
): Readable {
  let seq = 0
  let sent = 0
  return new Readable({
    read() {
      repo.findPart(db, reportId, generation, seq).then(
        (content) => {
          if (content === undefined) {
            if (sent === sizeBytes) this.push(null)
            else
              this.destroy(
                new Error(
                  `report ${reportId}: its parts hold ${sent} bytes, ${sizeBytes} expected`,
                ),
              )
            return
          }
          seq++
          const chunk = Buffer.from(content, 'utf8')
          sent += chunk.length
          this.push(chunk)
        },
        (err: unknown) => this.destroy(err as Error),
      )
    },
  })
}
