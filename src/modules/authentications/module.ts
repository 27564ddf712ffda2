import type { ServiceModule } from '../module.js'
import { registerAuthentications } from './routes.js'
import { AUTHENTICATION_EXPIRE_JOB, runExpireJob } from './service.js'
import { answer } from '../../lib/slots.js'
import { DELETE_AUTHENTICATIONS_OF } from '../clocks/index.js'
import { deleteAuthenticationsOf } from './clock-deletion.js'

/** 3-D Secure challenges; each expires through `authentication.expire`. */
export const authenticationsModule: ServiceModule = {
  name: 'authentications',
  routes: registerAuthentications,
  jobs: { [AUTHENTICATION_EXPIRE_JOB]: runExpireJob },
  hooks: [answer(DELETE_AUTHENTICATIONS_OF, deleteAuthenticationsOf)],
}
