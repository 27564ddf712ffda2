import type { Db } from '../db/types.js'

/**
 * The network that provisions packages onto eSIM profiles (SM-DP+ and operator). The service calls it
 * outside any database transaction; a real adapter and the sandbox simulator implement the same port.
 */

export interface ProvisionRequest {
  /** Our order id: the network's idempotency key, and how we ask it later what happened. */
  orderId: string
  iccid: string
  smdpAddress: string
  matchingId: string
  packageId: string
  dataMb: number | null
  validityDays: number
  organizationId: string
  environment: string
}

export type ProvisionOutcome = { status: 'provisioned' } | { status: 'failed'; reason: string }

/** A profile the network knows (suspension and resumption). */
export interface ProfileRequest {
  esimId: string
  iccid: string
  organizationId: string
  environment: string
}

/** What the network knows about an order it may or may not have received. */
export type NetworkOrderStatus = 'provisioned' | 'failed' | 'unknown'

/** The call did not answer in time: the profile may or may not carry the package. */
export class EsimNetworkTimeout extends Error {
  constructor(message = 'The eSIM provisioning network did not answer in time.') {
    super(message)
    this.name = 'EsimNetworkTimeout'
  }
}

export interface EsimNetwork {
  /** Provisions the package onto the profile. Resolves with the outcome, or rejects with EsimNetworkTimeout. */
  provision(request: ProvisionRequest): Promise<ProvisionOutcome>
  /** Asks what became of an order (settlement of timed-out or interrupted orders). */
  orderStatus(orderId: string): Promise<NetworkOrderStatus>
  /**
   * Bars the profile from the network (no data flows) until resumed; idempotent. Optional: an adapter whose network
   * cannot do it leaves it out, and the service answers `422 operation_unsupported`.
   */
  suspend?(request: ProfileRequest): Promise<void>
  /** Lets a suspended profile on the network again; idempotent. Optional, as `suspend`. */
  resume?(request: ProfileRequest): Promise<void>
  /**
   * The same network keeping whatever it records in the service's database through `db` (a request's
   * autonomous handle on the embedded database, `http/idempotency.ts` `bindUnit`); a real network returns itself.
   */
  onDatabase(db: Db): EsimNetwork
}

/** How long the service waits for the network before treating the call as timed out. */
export const PROVISIONING_DEADLINE_MS = 10_000

/** Runs a provisioning call under the service's own deadline: a hung network counts as a timeout. */
export async function provisionWithDeadline(
  network: EsimNetwork,
  request: ProvisionRequest,
  deadlineMs = PROVISIONING_DEADLINE_MS,
): Promise<ProvisionOutcome> {
  return withDeadline(network.provision(request), deadlineMs)
}

/** Any call to the network under the service's deadline (EsimNetworkTimeout past it). */
export async function withDeadline<T>(
  call: Promise<T>,
  deadlineMs = PROVISIONING_DEADLINE_MS,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new EsimNetworkTimeout()), deadlineMs)
  })
  try {
    return await Promise.race([call, deadline])
  } finally {
    clearTimeout(timer)
  }
}
