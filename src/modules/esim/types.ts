import type { Generated } from 'kysely'
import type { Json, Timestamp } from '../../db/types.js'
import type { FxDetailsValue } from '../../http/fx-details.js'

export type SaleStatus = 'on_sale' | 'frozen' | 'withdrawn'

export interface EsimPackagesTable {
  id: string
  name: string
  /** null: unlimited data. */
  data_mb: number | null
  validity_days: number
  countries: Json<string[]>
  region: string
  price: number
  currency: string
  status: string
  created_at: Timestamp
  updated_at: Timestamp
}

export interface EsimTopUpsTable {
  id: string
  package_id: string
  name: string
  data_mb: number | null
  validity_days: number
  price: number
  currency: string
  status: string
  created_at: Timestamp
  updated_at: Timestamp
}

/** The sandbox simulator's per-organization view of a package's or add-on's sale status. */
export interface EsimStatusOverridesTable {
  organization_id: string
  environment: string
  item_id: string
  status: string
  updated_at: Timestamp
}

/** A blank profile in stock (`available`), reserved for an order in flight (`allocated`), or `provisioned`. */
export interface EsimProfilesTable {
  iccid: string
  smdp_address: string
  matching_id: string
  state: string
  order_id: string | null
  loaded_at: Timestamp
  updated_at: Timestamp
}

/** `pending` is the internal state while the provisioning call is in flight; it reads as `unsettled`. */
export interface EsimOrdersTable {
  id: string
  organization_id: string
  environment: string
  type: string
  status: string
  package_id: string
  top_up_id: string | null
  esim_id: string | null
  iccid: string | null
  cardholder_id: string | null
  account_id: string | null
  price: number
  currency: string
  /** What an order paid from an account is charged, in the account's currency (null: the organization is billed). */
  charged_amount: number | null
  charged_currency: string | null
  /** How the price was converted into `charged_currency`; null when it is the price's currency. */
  fx: Json<FxDetailsValue> | null
  reference: string
  metadata: Json<Record<string, string>>
  failure_reason: string | null
  ledger_entry_id: string | null
  /** When it was refunded (its eSIM canceled): the paying account credited, or the organization not billed. */
  refunded_at: Timestamp | null
  /** `manual` (a caller bought it) or `auto` (an auto top-up started by a crossing of its trigger). */
  trigger: string
  /** An auto top-up: the package (its order id) whose crossing started it; unique, so never two for one crossing. */
  crossing_order_id: string | null
  /**
   * While the order is open, the network's time of it (wall time, also under a sandbox clock): when it was sent to the
   * network (in flight), or when its create call timed out (unsettled). What settlement and the in-flight window
   * measure; not shown.
   */
  network_at: Timestamp | null
  created_at: Timestamp
  updated_at: Timestamp
  settled_at: Timestamp | null
}

export interface EsimsTable {
  id: string
  organization_id: string
  environment: string
  iccid: string
  smdp_address: string
  matching_id: string
  cardholder_id: string | null
  order_id: string
  status: string
  /** Where the device is attached now, as the network last reported it (null until then). */
  country: string | null
  installed_at: Timestamp | null
  first_used_at: Timestamp | null
  /** When the validity of its last package ends (the latest `expires_at` of its packages). */
  valid_until: Timestamp | null
  /** When the end of its validity was announced (`esim.expired`); null while valid. */
  expired_at: Timestamp | null
  /** The validity warnings already sent for the current `valid_until` (hours before it). */
  validity_warned_hours: number[]
  /** This eSIM's own alert settings; null: the organization's. */
  usage_thresholds_pct: number[] | null
  validity_warning_hours: number[] | null
  /** The status a suspended eSIM returns to when resumed. */
  suspended_from: string | null
  /** Auto top-up settings (all null: off): the add-on bought, the account paying, when, and at most how many a month. */
  auto_top_up_id: string | null
  auto_top_up_account_id: string | null
  auto_top_up_trigger: string | null
  auto_top_up_threshold_pct: number | null
  auto_top_up_max_per_month: number | null
  /** The calendar month (UTC, `YYYY-MM`) `auto_top_up_runs` counts; another month counts 0. */
  auto_top_up_month: string | null
  auto_top_up_runs: number
  created_at: Timestamp
  updated_at: Timestamp
}

/** An organization's alert settings in one environment (absent: the defaults). */
export interface EsimAlertSettingsTable {
  organization_id: string
  environment: string
  usage_thresholds_pct: number[]
  validity_warning_hours: number[]
  created_at: Timestamp
  updated_at: Timestamp
}

/** The inbox of usage reports (a network's usage feed): the usage sweep applies them in batches, oldest first. */
export interface EsimUsageReportsTable {
  id: Generated<string>
  organization_id: string
  environment: string
  esim_id: string
  data_used_mb: number
  reported_at: Timestamp
}

/** One package running on an eSIM; keyed by the order that put it there. Top-ups add to its data and validity. */
export interface EsimBundlesTable {
  order_id: string
  esim_id: string
  package_id: string
  status: string
  data_mb: number | null
  data_used_mb: number
  /** The usage thresholds (percent) this package has announced (`esim.usage_threshold_reached`): each once. */
  alerted_pct: number[]
  /** When this package's crossing of the eSIM's auto top-up trigger was claimed (once: one top-up per crossing). */
  auto_top_up_claimed_at: Timestamp | null
  /** Why the top-up this crossing started bought nothing (`esim.auto_top_up_failed`); the crossing is then done. */
  auto_top_up_failure: string | null
  activated_at: Timestamp | null
  expires_at: Timestamp | null
  created_at: Timestamp
  updated_at: Timestamp
}

declare module '../../db/types.js' {
  interface Database {
    esim_packages: EsimPackagesTable
    esim_top_ups: EsimTopUpsTable
    esim_status_overrides: EsimStatusOverridesTable
    esim_profiles: EsimProfilesTable
    esim_orders: EsimOrdersTable
    esims: EsimsTable
    esim_bundles: EsimBundlesTable
    esim_alert_settings: EsimAlertSettingsTable
    esim_usage_reports: EsimUsageReportsTable
  }
}
