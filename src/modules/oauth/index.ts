import type { ServiceModule } from '../module.js'
import { registerOauth } from './routes.js'

/** The token endpoint and the clients' keys. */
export const oauthModule: ServiceModule = { name: 'oauth', routes: registerOauth }
