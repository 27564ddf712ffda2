import { ApiError } from '../../http/errors.js'
import type { ProcessorRegistry } from '../../processors/registry.js'
import type { SimulatorFeed } from '../../processors/port.js'
import type { CardRow } from '../cards/index.js'

export type { SimulatorFeed }

const LABEL: Record<SimulatorFeed, string> = {
  network_tokens: 'network token provisioning',
  three_d_secure: '3-D Secure challenges',
  disputes: 'dispute outcomes',
}

/**
 * Refuses a simulator call with `operation_unsupported` when the program's processor cannot inject the feed
 * (its `simulatorFeeds`, in its file under src/processors, as the runtime's registry has it; a processor the
 * deployment does not have has none), or (tokens,
 * 3-D Secure) when the program lacks the capability the feed belongs to.
 */
export function requireSimulatorFeed(
  processors: ProcessorRegistry,
  program: { id: string; processor: string; capabilities: readonly string[] },
  feed: SimulatorFeed,
): void {
  const injects = processors.simulatorFeeds(program.processor).includes(feed)
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
  if (card.status === 'closed')
    throw new ApiError('card_closed', {
      param: 'card_id',
      message: `Card ${card.id} is closed and cannot be ${action}.`,
    })
  throw new ApiError('card_invalid_state', {
    param: 'card_id',
    message: `Only an active card can be ${action}; card ${card.id} is ${card.status}.`,
  })
}
