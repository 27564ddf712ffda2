import type { Generated } from 'kysely'
import type { Timestamp } from '../../db/types.js'

export interface EventsTable {
  id: string
  organization_id: string
  environment: string
  type: string
  api_version: string
  /** The object, and the details of its type beside it. */
  data: { object: Record<string, unknown> } & Record<string, unknown>
  created_at: Timestamp
  /** The sandbox clock the event's object is under (migration 0130); null for most. */
  clock_id: Generated<string | null>
}

declare module '../../db/types.js' {
  interface Database {
    events: EventsTable
  }
}
