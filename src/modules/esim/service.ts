/** What other modules (the hosted H5 page, reports) use of eSIM sales; they never reach into its repos. */
export { cardholderEsims, requireEsim, retrieveEsim, type EsimView } from './esims-service.js'
export {
  createOrder,
  listOrders,
  ordersCreatedIn,
  requireOrder,
  unsettledOrders,
  type UnsettledOrders,
} from './orders-service.js'
export {
  listPackages,
  listPlatformPackages,
  updatePackage,
  type PackageView,
  type TopUpView,
} from './packages-service.js'
export { inventoryCounts, loadProfiles, type InventoryLoad } from './inventory.js'
export { offersForEsim, purchaseTopUp } from './top-ups-service.js'
export { presentOrder, type OrderView } from './present.js'
