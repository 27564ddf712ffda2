import type { ServiceModule } from '../module.js'
import { registerNetworkTokens } from './routes.js'

export const networkTokensModule: ServiceModule = { name: 'network-tokens', routes: registerNetworkTokens }
