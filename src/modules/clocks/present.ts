import { iso } from '../../http/ownership.js'
import type { SandboxClockRow } from './repo.js'
import type { SandboxClockView } from './schemas.js'

/** The REST shape of a sandbox clock (also the `data.object` of its events). */
export function presentClock(row: SandboxClockRow): SandboxClockView {
  return {
    id: row.id,
    object: 'sandbox_clock',
    name: row.name,
    frozen_time: iso(row.frozen_time)!,
    status: row.status,
    deletes_after: iso(row.deletes_after)!,
    created_at: iso(row.created_at)!,
  }
}
