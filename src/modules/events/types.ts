import type { Timestamp } from '../../db/types.js'
import type { EventExtraData } from './catalog.js'

export interface EventsTable {
  id: string
  organization_id: string
  environment: string
  type: string
  api_version: string
  data: { object: Record<string, unknown> } & EventExtraData
  created_at: Timestamp
}

declare module '../../db/types.js' {
  interface Database {
    events: EventsTable
  }
}
