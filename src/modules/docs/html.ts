import { attrs, html, type Html } from '../../lib/html.js'

/** The stylesheet of every server-rendered docs page, served at /docs/assets/docs.css: phone first, system fonts. */
export const DOCS_CSS = `
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1a1f36;background:#f6f8fa}
.site,.site *,.doc,.doc *,.doc *::before,.doc *::after{box-sizing:border-box}
.skip{position:absolute;left:-9999px;top:0;background:#fff;color:#0a2540;padding:8px 12px;z-index:10}.skip:focus{left:8px;top:8px}
.site{background:#0a2540;color:#fff;padding:10px 16px;display:flex;flex-wrap:wrap;align-items:center;gap:4px 20px}
.site .brand{color:#fff;font-weight:700;text-decoration:none;font-size:17px}
.site nav{display:flex;flex-wrap:wrap;gap:2px 16px}.site nav a{color:#cfe7ff;text-decoration:none;padding:6px 0}
.site nav a:hover,.site nav a[aria-current=page]{color:#fff;text-decoration:underline;text-underline-offset:4px}
.doc{display:block;max-width:1000px;margin:0 auto;padding:16px;min-width:0;overflow-wrap:break-word}
.doc a{color:#0b5cad}.doc a:hover{color:#073f78}
.doc h1{font-size:26px;line-height:1.25;margin:12px 0 16px}.doc h2{font-size:21px;margin-top:36px;border-bottom:1px solid #d8dee4;padding-bottom:4px}
.doc h3{font-size:18px;margin-top:28px}
.doc p,.doc li{overflow-wrap:anywhere}
.doc table{border-collapse:collapse;width:100%;background:#fff}.doc td,.doc th{border:1px solid #e3e8ee;padding:6px 10px;text-align:left;vertical-align:top}
.doc th{background:#f0f3f6}.doc .table-scroll{overflow-x:auto;margin:12px 0}.doc .table-scroll table{margin:0}
.doc code{font:14px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#eef1f4;padding:1px 4px;border-radius:3px}
.doc pre{background:#0a2540;color:#f0f4f8;padding:12px 14px;border-radius:6px;overflow-x:auto;font-size:14px;line-height:1.45;max-width:100%}
.doc pre code{background:none;color:inherit;padding:0;font-size:inherit;white-space:pre}
.doc pre:focus-visible,.doc .table-scroll:focus-visible{outline:3px solid #f5a623;outline-offset:2px}
.doc blockquote{margin:12px 0;padding:4px 16px;border-left:4px solid #c9d3dd;color:#3c4257;background:#fff}
.doc tr:target{background:#fff8c5}
.doc .lead{font-size:18px;color:#3c4257}
.doc .cards{list-style:none;padding:0;display:grid;gap:12px;grid-template-columns:repeat(auto-fill,minmax(260px,1fr))}
.doc .cards li{background:#fff;border:1px solid #e3e8ee;border-radius:6px;padding:12px 16px}
.doc .cards a{font-weight:600}.doc .cards p{margin:4px 0 0;color:#3c4257;font-size:15px}
@media (max-width:640px){
.doc table.stack thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.doc table.stack,.doc table.stack tbody,.doc table.stack tr,.doc table.stack td{display:block;width:100%}
.doc table.stack tr{border:1px solid #e3e8ee;border-radius:6px;margin:0 0 10px;background:#fff}
.doc table.stack td{border:0;padding:3px 12px;overflow-wrap:anywhere}.doc table.stack td:first-child{padding-top:8px}.doc table.stack td:last-child{padding-bottom:8px}
.doc table.stack td[data-label]::before{content:attr(data-label) ": ";font-weight:600;color:#3c4257}
.doc .table-scroll:has(table.stack){overflow:visible}}
@media (min-width:700px){.site{padding:12px 32px}.doc{padding:24px 32px}.doc h1{font-size:30px}}
`

export interface PageOptions {
  /** The navigation entry to mark as the current page (its href). */
  current?: string
  /** Extra markup for the head. */
  head?: Html
  /** Extra class on body. */
  bodyClass?: string
}

const NAV: [string, string][] = [
  ['/docs', 'API reference'],
  ['/docs/guides', 'Guides'],
  ['/docs/errors', 'Errors'],
  ['/openapi.json', 'openapi.json'],
]

/** The page chrome shared by the landing page, the guides, the error catalogue and the reference's frame. */
export function pageHeader(current?: string): Html {
  const link = (href: string) => attrs({ href, 'aria-current': href === current && 'page' })
  const links = NAV.map(([href, label]) => html`<a${link(href)}>${label}</a>`)
  return html`<a class="skip" href="#main">Skip to content</a><header class="site"><a class="brand"${link('/')}>svc</a><nav aria-label="Documentation">${links}</nav></header>`
}

/** A whole page: `body` is the content of `<main>`, its own `<h1>` included. */
export function page(title: string, body: Html, options: PageOptions = {}): string {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title}</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/docs/assets/docs.css">${options.head}</head><body${attrs({ class: options.bodyClass || null })}>
${pageHeader(options.current)}
<main id="main" class="doc">${body}</main></body></html>`.text
}

/** The policy of the server-rendered pages: nothing but this host's stylesheet; no script at all. */
export const PAGE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
