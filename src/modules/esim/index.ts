/** What the esim module publishes to other modules: they import it only through this file. */
export {
  cardholderEsims,
  createOrder,
  inventoryCounts,
  listOrders,
  listPackages,
  listPlatformPackages,
  loadProfiles,
  offersForEsim,
  ordersCreatedIn,
  purchaseTopUp,
  requireEsim,
  unsettledOrders,
  updatePackage,
} from './service.js'
export type {
  EsimView,
  InventoryLoad,
  OrderView,
  PackageView,
  TopUpView,
  UnsettledOrders,
} from './service.js'
export { InventoryCsvError, parseInventoryCsv } from './inventory-csv.js'
export type { SaleStatus } from './types.js'
export { listEsims, retrieveEsim } from './esims-service.js'
export { updateEsim } from './lifecycle-service.js'
export { recordUsage } from './usage.js'
export { getAlertSettings } from './alerts.js'
export type { EsimSummaryView } from './esims-service.js'
export { requireOrder, retrieveOrder } from './orders-service.js'
export { retrievePackage, simulateSaleStatus, viewOf } from './packages-service.js'
export { settleOrder } from './settlement.js'
export { esimsByIccid, esimsWithIdPrefix, ordersWithIdPrefix, type EsimMatch } from './search.js'
