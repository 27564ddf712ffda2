import { ApiError } from '../../http/errors.js'
import type { CardRow } from '../cards/index.js'

/** The simulated network feeds a sandbox processor can inject: wallet tokens, 3-D Secure challenges, dispute outcomes. */
export type SimulatorFeed = 'network_tokens' | 'three_d_secure' | 'disputes'

/**
 * Which processor simulates which feed (decisions.md, Sandbox simulator): `sim_basic` has none, as a real
 * processor without those feeds would; any other processor has none either.
 */
const FEEDS: Record<string, readonly SimulatorFeed[]> = {
  sim_full: ['network_tokens', 'three_d_secure', 'disputes'],
  sim_basic: [],
}

const LABEL: Record<SimulatorFeed, string> = {
  network_tokens: 'network token provisioning',
  three_d_secure: '3-D Secure challenges',
  disputes: 'dispute outcomes',
}

/**
 * Refuses a simulator call with `operation_unsupported` when the program's processor cannot inject the feed,
 * or (tokens, 3-D Secure) when the program lacks the capability the feed belongs to.
 */
export function requireSimulatorFeed(program: { id: string; processor: string; capabilities: readonly string[] }, feed: SimulatorFeed): void {
  const injects = (FEEDS[program.processor] ?? []).includes(feed)
  const capable = feed === 'disputes' || program.capabilities.includes(feed)
  if (!injects || !capable) {
    throw new ApiError('operation_unsupported', {
      message: `The processor of program ${program.id} (${program.processor}) has no simulator for ${LABEL[feed]}.`,
    })
  }
}

/** A card the network may act on (tokenize, challenge): only an active card; otherwise the card's own state error. */
export function requireActiveCard(card: CardRow, action: string): void {
  if (card.status === 'active') return
  if (card.status === 'pending') throw new ApiError('card_not_provisioned', { param: 'card_id' })
  if (card.status === 'closed') throw new ApiError('card_closed', { param: 'card_id', message: `Card ${card.id} is closed and cannot be ${action}.` })
  throw new ApiError('card_invalid_state', { param: 'card_id', message: `Only an active card can be ${action}; card ${card.id} is ${card.status}.` })
}
