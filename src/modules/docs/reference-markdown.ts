import { Marked, type Tokens } from 'marked'
import { attrs, escapeHtml, html, type Html, raw } from '../../lib/html.js'

/**
 * The document's Markdown (its introduction, operation and field descriptions) as HTML for the reference: raw HTML is
 * shown as text, links keep only this page's anchors, paths and http(s) addresses, and code blocks wrap instead of
 * widening the page (no scroller a keyboard would have to reach).
 */

const SAFE_HREF = /^(#|\/(?!\/)|https?:)/i

function renderer(heading?: (depth: number, text: string, inner: string) => string) {
  const marked = new Marked({ gfm: true, async: false })
  marked.use({
    renderer: {
      html(token: Tokens.HTML | Tokens.Tag) {
        return escapeHtml(token.text)
      },
      link(token: Tokens.Link) {
        const inner = this.parser.parseInline(token.tokens)
        if (!SAFE_HREF.test(token.href)) return inner
        return html`<a${attrs({ href: token.href })}>${raw(inner)}</a>`.text
      },
      ...(heading
        ? {
            heading(token: Tokens.Heading) {
              const text = this.parser.parseInline(token.tokens, this.parser.textRenderer)
              return heading(token.depth, text, this.parser.parseInline(token.tokens))
            },
          }
        : {}),
    },
  })
  return marked
}

const inlineMarked = renderer()

/** One line of Markdown (a description), without a wrapping paragraph. */
export function inline(text: string): Html {
  return raw(inlineMarked.parseInline(text) as string)
}

/** Blocks of Markdown; `heading` writes each heading (its depth, its text, its inner HTML). */
export function blocks(
  text: string,
  heading?: (depth: number, text: string, inner: string) => string,
): Html {
  return raw(renderer(heading).parse(text) as string)
}
