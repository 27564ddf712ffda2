import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Marked, type Tokens } from 'marked'
import { attrs, escapeHtml, html, raw } from '../../lib/html.js'

/** One guide of the folder, as the index lists it. */
export interface GuideEntry {
  /** The file name without `.md`: the last segment of `/docs/guides/<name>`. */
  name: string
  /** The text of the file's first heading (the file name when it has none). */
  title: string
  /** The text of its first paragraph, shortened. */
  summary: string
}

export interface RenderedGuide extends GuideEntry {
  html: string
}

/**
 * The address the guides are written for: where `npm start` listens by default. A served guide names the server's
 * own address instead (`servedSource`), so a reader of a server on another port or host copies commands that reach it.
 */
export const WRITTEN_BASE_URL = 'http://localhost:8080'

const WRITTEN_BASE_URL_PATTERN = /http:\/\/localhost:8080(?![0-9])/g

/** A guide's Markdown as `baseUrl`'s server shows it: every `http://localhost:8080` is `baseUrl`. */
export function servedSource(source: string, baseUrl: string): string {
  return source.replace(WRITTEN_BASE_URL_PATTERN, () => baseUrl)
}

/** The names a guide may have: no dots, no slashes, so a request can never name a file outside the folder. */
export const GUIDE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/

/** GitHub's heading anchors (what `[x](#the-same-on-sim_basic)` in a guide expects), numbered when repeated. */
function slugger(): (text: string) => string {
  const seen = new Map<string, number>()
  return (text) => {
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
      .replace(/ /g, '-')
    let slug = base
    while (seen.has(slug)) {
      const n = (seen.get(base) ?? 0) + 1
      seen.set(base, n)
      slug = `${base}-${n}`
    }
    seen.set(slug, 0)
    return slug
  }
}

const SAFE_SCHEME = /^(https?:|mailto:)/i
const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:/i

/**
 * Where a link of a guide points on the served pages: `other.md`, `./other.md#x` and `/docs/guides/other.md` go to
 * `/docs/guides/other(#x)`; fragments, absolute paths (`/docs`, `/docs/errors#card_closed`) and http(s) or mailto
 * links stay; any other scheme (`javascript:`) is dropped.
 */
export function guideHref(href: string): string | null {
  const guide = /^(?:\.\/|\/docs\/guides\/)?([A-Za-z0-9][A-Za-z0-9_-]*)\.md(#.*)?$/.exec(href)
  if (guide) return `/docs/guides/${guide[1]}${guide[2] ?? ''}`
  if (HAS_SCHEME.test(href) && !SAFE_SCHEME.test(href)) return null
  return href
}

function plain(text: string, max = 220): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1).trimEnd()}…` : flat
}

/**
 * Markdown to HTML, server-side: GitHub-flavoured, heading anchors GitHub's way, links between guides rewritten,
 * raw HTML shown as text except comments (dropped) and empty anchors (`<a id=…></a>`), code blocks and tables scrollable on their
 * own (and focusable, so a keyboard can scroll them) instead of widening a phone's page.
 */
export function renderGuide(name: string, source: string): RenderedGuide {
  const slug = slugger()
  let title = ''
  let summary = ''
  let anchorOpen = false
  const marked = new Marked({ gfm: true, async: false })
  marked.use({
    renderer: {
      heading(token: Tokens.Heading) {
        const text = this.parser.parseInline(token.tokens, this.parser.textRenderer)
        if (!title) title = plain(text, 200)
        return html`<h${token.depth} id="${slug(text)}">${raw(this.parser.parseInline(token.tokens))}</h${token.depth}>\n`
          .text
      },
      paragraph(token: Tokens.Paragraph) {
        if (!summary)
          summary = plain(this.parser.parseInline(token.tokens, this.parser.textRenderer))
        return false
      },
      link(token: Tokens.Link) {
        const inner = this.parser.parseInline(token.tokens)
        const href = guideHref(token.href)
        if (href === null) return inner
        return html`<a${attrs({ href, title: token.title || null })}>${raw(inner)}</a>`.text
      },
      image(token: Tokens.Image) {
        const src = guideHref(token.href)
        if (src === null) return escapeHtml(token.text)
        return html`<img${attrs({ src, alt: token.text, title: token.title || null })}>`.text
      },
      html(token: Tokens.HTML | Tokens.Tag) {
        // Two pieces of markup have a use in a guide: a comment (a note to its editors, never shown) and an
        // empty anchor naming a place (`<a id="card.created"></a>`, the event catalogue's). Anything else is text.
        // Inline, marked hands over `<a id="…">` and `</a>` as two tokens.
        const text = token.text.trim()
        if (/^<!--[\s\S]*-->$/.test(text)) return ''
        const anchor = /^<a id="([A-Za-z0-9_.:-]{1,100})">(<\/a>)?$/.exec(text)
        if (anchor) {
          anchorOpen = anchor[2] === undefined
          return html`<a id="${anchor[1]}">${anchorOpen ? '' : raw('</a>')}`.text
        }
        if (text === '</a>' && anchorOpen) {
          anchorOpen = false
          return '</a>'
        }
        return escapeHtml(token.text)
      },
    },
  })
  const body = (marked.parse(source) as string)
    .replace(/<pre>/g, '<pre tabindex="0">')
    .replace(/<table>/g, '<div class="table-scroll" tabindex="0"><table>')
    .replace(/<\/table>/g, '</table></div>')
  return { name, title: title || name, summary, html: body }
}

/**
 * The guides of one folder: `<name>.md` files only, read when asked (an edited guide shows on the next request), each
 * naming the server at `baseUrl` (`servedSource`).
 */
export class GuideLibrary {
  constructor(
    readonly dir: string,
    readonly baseUrl: string = WRITTEN_BASE_URL,
  ) {}

  /** Every guide's name, sorted; none when the folder does not exist. Only regular files directly in the folder. */
  async names(): Promise<string[]> {
    let entries
    try {
      entries = await readdir(this.dir, { withFileTypes: true })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw err
    }
    return entries
      .filter((e) => e.isFile() && e.name.endsWith('.md') && GUIDE_NAME.test(e.name.slice(0, -3)))
      .map((e) => e.name.slice(0, -3))
      .sort()
  }

  async list(): Promise<GuideEntry[]> {
    const out: GuideEntry[] = []
    for (const name of await this.names()) {
      const guide = await this.get(name)
      if (guide) out.push({ name: guide.name, title: guide.title, summary: guide.summary })
    }
    return out
  }

  /** The guide of that name, rendered; null unless the name is one the folder lists. */
  async get(name: string): Promise<RenderedGuide | null> {
    if (!GUIDE_NAME.test(name) || !(await this.names()).includes(name)) return null
    const source = await readFile(join(this.dir, `${name}.md`), 'utf8')
    return renderGuide(name, servedSource(source, this.baseUrl))
  }
}
