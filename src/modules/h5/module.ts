import type { ServiceModule } from '../module.js'
import { registerH5 } from './routes.js'

/** The hosted eSIM page (H5) a cardholder opens from a link: buy, install, top up. */
export const h5Module: ServiceModule = { name: 'h5', routes: registerH5 }
