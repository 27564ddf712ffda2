import type { Purge } from '../../jobs/registry.js'
import { purgeSchedule } from '../../jobs/retention.js'
import type { ServiceModule } from '../module.js'
import { registerH5 } from './routes.js'
import { purgeExpiredLinks } from './service.js'
import { answer } from '../../lib/slots.js'
import { DELETE_H5_LINKS_OF } from '../clocks/index.js'
import { deleteH5LinksOf } from './clock-deletion.js'

/** How often links a week past their expiry are removed. */
const PURGE_EVERY_MS = 10 * 60 * 1000

/** Links a week past their expiry (until then an expired link answers "expired", not "not found"). */
const H5_PURGES: readonly Purge[] = [{ name: 'esim_h5_links', run: purgeExpiredLinks }]

/** The hosted eSIM page (H5) a cardholder opens from a link: buy, install, top up. */
export const h5Module: ServiceModule = {
  name: 'h5',
  routes: registerH5,
  purges: H5_PURGES,
  schedules: [purgeSchedule('h5.purge_links', PURGE_EVERY_MS, H5_PURGES)],
  hooks: [answer(DELETE_H5_LINKS_OF, deleteH5LinksOf)],
}
