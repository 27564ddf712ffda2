/** What the esim module publishes to other modules: they import it only through this file. */
export { cardholderEsims, createOrder, listOrders, listPackages, offersForEsim, ordersCreatedIn, purchaseTopUp, requireEsim } from './service.js'
export type { EsimView, OrderView, PackageView, TopUpView } from './service.js'
