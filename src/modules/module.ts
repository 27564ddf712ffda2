import type { FastifyInstance } from 'fastify'
import type { AppDeps } from '../app-deps.js'
import type { Db } from '../db/types.js'
import type { AccessTokenGrantLookup } from '../http/auth.js'
import { noScope, type ScopeHooks } from '../http/ownership.js'
import type { JobSource } from '../jobs/registry.js'
import { noAccountCards, type AccountCardsLister } from './accounts/cards-hook.js'
import { noAddressChangeGuard, noCardholderCards, type AddressChangeGuard, type CardholderCardsLister } from './cardholders/hooks.js'

/**
 * What a lower module asks of a higher one at request time. Each is provided by one module's value
 * (`hooks`) and joined once by the runtime (`deps.hooks`); tests replace a field for their duration.
 * `ScopeHooks` (http, the list filters' environment check): the organization and environment of a cardholder,
 * account, card, program, authorization or transaction by id, each answered by the object's module.
 */
export interface Hooks extends ScopeHooks {
  /** Asked by http for every request whose token is not cached: what the access token grants; answered by oauth. */
  accessTokenGrant: AccessTokenGrantLookup
  /** Asked by cardholders before an address change; answered by accounts (a program requiring KYC for it). */
  addressChangeGuard: AddressChangeGuard
  /** `GET /v1/cardholders/{id}/cards`, listed by cards. */
  cardholderCards: CardholderCardsLister
  /** `GET /v1/accounts/{id}/cards`, listed by cards. */
  accountCards: AccountCardsLister
  /** Asked by transactions before a refund: what disputes claim of a capture (won back or still open); answered by disputes. */
  disputedTotal: (trx: Db, transactionId: string) => Promise<number>
  /** Told by cards inside the transaction that closes a card; answered by network tokens (its tokens are deleted). */
  cardClosed: (trx: Db, card: ClosedCard, now: Date) => Promise<void>
}

/** What a closed card tells the modules that hang off it. */
export interface ClosedCard { id: string; organization_id: string; environment: string }

/**
 * One module of the service, as `MODULES` lists it: its routes (mounted in list order), its job handlers
 * by type, its recurring work and the hooks it answers. Nothing here runs when the module is imported.
 */
export interface ServiceModule extends JobSource {
  routes?(app: FastifyInstance, deps: AppDeps): void | Promise<void>
  hooks?: Partial<Hooks>
}

/** The hooks the modules provide, over the defaults that hold while no module answers (no cards, no accounts, no token, no object found). */
export function buildHooks(modules: readonly ServiceModule[]): Hooks {
  const hooks: Hooks = {
    addressChangeGuard: noAddressChangeGuard, cardholderCards: noCardholderCards, accountCards: noAccountCards, disputedTotal: async () => 0, cardClosed: async () => {},
    accessTokenGrant: async () => undefined,
    cardholderScope: noScope, accountScope: noScope, cardScope: noScope, programScope: noScope, authorizationScope: noScope, transactionScope: noScope,
  }
  const owners = new Map<string, string>()
  for (const m of modules) {
    for (const [name, hook] of Object.entries(m.hooks ?? {}) as [keyof Hooks, never][]) {
      const previous = owners.get(name)
      if (previous !== undefined) throw new Error(`hook ${name} is provided by both ${previous} and ${m.name}`)
      owners.set(name, m.name)
      hooks[name] = hook
    }
  }
  return hooks
}
