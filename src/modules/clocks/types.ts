import type { Timestamp } from '../../db/types.js'

export interface SandboxClocksTable {
  id: string
  organization_id: string
  environment: string
  name: string | null
  /** The clock's time: what its objects read as "now" (docs/sandbox-clocks.md). */
  frozen_time: Timestamp
  status: 'ready' | 'advancing'
  /** The target of an advance not yet finished (status `advancing`), else null. */
  advancing_to: Timestamp | null
  deletes_after: Timestamp
  deleted_at: Timestamp | null
  /** When the objects of a deleted clock were all deleted (null while its deletion is unfinished, or it is live). */
  objects_deleted_at: Timestamp | null
  created_at: Timestamp
  updated_at: Timestamp
}

declare module '../../db/types.js' {
  interface Database {
    sandbox_clocks: SandboxClocksTable
  }
}
