import { html, raw, type Html } from '../../lib/html.js'
import type { RevealedValues } from './reveal-sessions.js'

/**
 * The hosted card details page and its message pages, written with the escaping `html` tag (src/lib/html.ts). No
 * inline script: the copy buttons come to life through one served file (`REVEAL_SCRIPT_PATH`) loaded with the
 * response's nonce. Styling is through the CSS variables below, which the embedding page sets with query parameters.
 */

type VariableKind = 'color' | 'length' | 'font'

/**
 * The documented CSS variables (docs/cards.md, "Hosted card details"): `--svc-<name>` is set by the query parameter
 * `<name>` of the page's URL. A value that does not have the variable's shape is ignored (the default stays).
 */
export const REVEAL_VARIABLES: Record<string, { kind: VariableKind; default: string }> = {
  text: { kind: 'color', default: '#14213d' },
  label: { kind: 'color', default: '#4a5468' },
  background: { kind: 'color', default: '#ffffff' },
  accent: { kind: 'color', default: '#2251ff' },
  'accent-text': { kind: 'color', default: '#ffffff' },
  'font-family': {
    kind: 'font',
    default: 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
  },
  'font-size': { kind: 'length', default: '16px' },
  radius: { kind: 'length', default: '10px' },
}

/**
 * Shapes a value may take: no character that could end the declaration, the rule or the style element
 * (`;`, `{`, `}`, `<`, `\`) fits any of them.
 */
const SHAPES: Record<VariableKind, RegExp> = {
  // #rgb, #rgba, #rrggbb, #rrggbbaa, a colour name, or rgb()/rgba()/hsl()/hsla() of numbers.
  color:
    /^(#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})|[a-zA-Z]{3,20}|(?:rgba?|hsla?)\([0-9.,%\s/a-z]{1,60}\))$/,
  length: /^(0|[0-9]{1,3}(\.[0-9]{1,3})?(px|rem|em))$/,
  font: /^[A-Za-z0-9 ,'"-]{1,120}$/,
}

/** The variables' values for this request: the defaults, each replaced by a query parameter of the right shape. */
export function revealVariables(query: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, spec] of Object.entries(REVEAL_VARIABLES)) {
    const given = query[name]
    out[name] =
      typeof given === 'string' && SHAPES[spec.kind].test(given.trim())
        ? given.trim()
        : spec.default
  }
  return out
}

/** The page's rules, one a line; every colour, size and font in them is a variable. */
const RULES = [
  '*{box-sizing:border-box}',
  '[hidden]{display:none!important}',
  'html{-webkit-text-size-adjust:100%}',
  'body{margin:0;background:var(--svc-background);color:var(--svc-text);line-height:1.4;' +
    'font-family:var(--svc-font-family);font-size:var(--svc-font-size)}',
  'main{padding:12px 14px}',
  '.visually-hidden{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;' +
    'clip:rect(0 0 0 0);white-space:nowrap;border:0}',
  'dl{margin:0}',
  '.field{padding:8px 0}',
  '.field+.field{border-top:1px solid color-mix(in srgb,var(--svc-label) 25%,transparent)}',
  'dt{font-size:.8125em;color:var(--svc-label);margin:0 0 2px}',
  'dd{margin:0;display:flex;align-items:center;justify-content:space-between;gap:12px}',
  '.value{font-size:1.125em;font-variant-numeric:tabular-nums;letter-spacing:.04em;word-break:break-all;' +
    'user-select:all}',
  '.copy{flex:none;min-width:44px;min-height:44px;padding:0 14px;border:0;border-radius:var(--svc-radius);' +
    'background:var(--svc-accent);color:var(--svc-accent-text);font:inherit;font-size:.875em;font-weight:600;' +
    'cursor:pointer}',
  '.copy:focus-visible{outline:3px solid var(--svc-text);outline-offset:2px}',
  '.status{min-height:1.4em;margin:4px 0 0;font-size:.8125em;color:var(--svc-label)}',
  'h1.message{margin:0 0 6px;font-size:1.125em}',
  'p.message{margin:0;color:var(--svc-label)}',
]

function stylesheet(variables: Record<string, string>): string {
  const declarations = Object.entries(variables)
    .map(([name, value]) => `--svc-${name}:${value}`)
    .join(';')
  return [`:root{${declarations}}`, ...RULES].join('\n')
}

export interface PageChrome {
  nonce: string
  variables: Record<string, string>
}

function layout(chrome: PageChrome, title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow, noarchive"><meta name="referrer" content="no-referrer">
<title>${title}</title><style nonce="${chrome.nonce}">${raw(stylesheet(chrome.variables))}</style></head>
<body>${body}</body></html>`.text
}

/** The number in groups of four, as printed on a card. */
function grouped(number: string): string {
  return number.replace(/(\d{4})(?=\d)/g, '$1 ')
}

/** Each field's label, and what its copy button's name says it copies ("Copy card number"). */
const LABELS: Record<keyof RevealedValues, [string, string]> = {
  number: ['Card number', 'card number'],
  cvc: ['Security code (CVC)', 'security code'],
  expiry: ['Expiry date', 'expiry date'],
}

/** The page with the card's values: one row per field, each with its copy button (shown once the script runs). */
export function renderRevealPage(
  chrome: PageChrome,
  values: RevealedValues,
  scriptPath: string,
): string {
  const rows = (Object.keys(LABELS) as (keyof RevealedValues)[]).flatMap((field) => {
    const value = values[field]
    if (value === undefined) return []
    const [label, copies] = LABELS[field]
    return [
      html`<div class="field"><dt>${label}</dt><dd>
<span class="value" id="value-${field}">${field === 'number' ? grouped(value) : value}</span>
<button type="button" class="copy" data-copy="${value}" data-label="${label}" hidden>\
<span class="copy-text">Copy</span><span class="visually-hidden"> ${copies}</span></button></dd></div>`,
    ]
  })
  return layout(
    chrome,
    'Card details',
    html`<main><h1 class="visually-hidden">Card details</h1>
<dl>${rows}</dl>
<p class="status" id="status" role="status"></p></main>
<script src="${scriptPath}" nonce="${chrome.nonce}"></script>`,
  )
}

/** A page that shows no card data: a heading and one sentence. */
export function renderRevealMessage(chrome: PageChrome, heading: string, text: string): string {
  return layout(
    chrome,
    heading,
    html`<main><h1 class="message">${heading}</h1><p class="message">${text}</p></main>`,
  )
}
