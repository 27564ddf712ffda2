import type { ServiceModule } from '../module.js'
import { registerCardholders } from './routes.js'

export const cardholdersModule: ServiceModule = { name: 'cardholders', routes: registerCardholders }
