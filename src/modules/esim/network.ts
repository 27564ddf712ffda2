import type { AppDeps } from '../../app-deps.js'
import type { EsimNetwork } from '../../esim-network/port.js'
import { SimulatedEsimNetwork } from '../../esim-network/simulator.js'

const networks = new WeakMap<AppDeps, EsimNetwork>()

/** The provisioning network of a runtime (one per runtime, so tests on several apps never share one): the simulator. */
export function esimNetworkFor(deps: AppDeps): EsimNetwork {
  let network = networks.get(deps)
  if (!network) {
    network = new SimulatedEsimNetwork(deps.db, deps.clock)
    networks.set(deps, network)
  }
  return network
}
