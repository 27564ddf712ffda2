import type { ServiceModule } from '../module.js'
import { registerOperator } from './routes.js'

/** The operator API (`/operator/v1`): organizations, programs, clients, network policies. */
export const operatorModule: ServiceModule = { name: 'operator', routes: registerOperator }
