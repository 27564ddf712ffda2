import type { RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import type { H5Section } from './types.js'

/** Every section a traveller page can show. */
export const H5_SECTIONS: readonly H5Section[] = ['esims', 'cards', 'balance']

/** What a link shows when its request names no sections: the eSIMs, as every link did before sections existed. */
export const DEFAULT_SECTIONS: readonly H5Section[] = ['esims']

/** The scope a section needs beyond `esim:write`: what the page shows and does there is the caller's to grant. */
const SECTION_SCOPES: Partial<Record<H5Section, string>> = {
  cards: 'cards:write',
  balance: 'accounts:read',
}

function isSection(value: string): value is H5Section {
  return (H5_SECTIONS as readonly string[]).includes(value)
}

/**
 * The sections asked for, in the order given (the page's order): at least one, each known; a section named twice
 * is folded into its first place. Each needs its scope (`SECTION_SCOPES`).
 */
export function linkSections(ctx: RequestCtx, asked: readonly string[] | undefined): H5Section[] {
  if (asked === undefined) return [...DEFAULT_SECTIONS]
  const unknown = asked.filter((s) => !isSection(s))
  if (unknown.length > 0)
    throw new ApiError('invalid_parameter', {
      param: 'sections',
      message: `Unknown section ${JSON.stringify(unknown[0])}: sections are ${H5_SECTIONS.join(', ')}.`,
    })
  const sections = [...new Set(asked as H5Section[])]
  if (sections.length === 0)
    throw new ApiError('invalid_parameter', {
      param: 'sections',
      message: `Name at least one section of ${H5_SECTIONS.join(', ')}, or leave sections out for esims.`,
    })
  for (const section of sections) {
    const scope = SECTION_SCOPES[section]
    if (scope && !ctx.scopes.has(scope))
      throw new ApiError('insufficient_scope', {
        message: `A link showing the ${section} section requires the ${scope} scope.`,
      })
  }
  return sections
}
