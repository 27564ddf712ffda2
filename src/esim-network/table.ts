import type { Timestamp } from '../db/types.js'

/** The simulated network's own tables: the sandbox's next-outcome directives and what it provisioned. */
export interface EsimSimDirectivesTable {
  organization_id: string
  environment: string
  next_outcome: string | null
  settles_as: string | null
  latency_ms: number | null
  updated_at: Timestamp
}

export interface EsimSimNetworkLogTable {
  order_id: string
  iccid: string
  outcome: string
  created_at: Timestamp
}

declare module '../db/types.js' {
  interface Database {
    esim_sim_directives: EsimSimDirectivesTable
    esim_sim_network_log: EsimSimNetworkLogTable
  }
}
