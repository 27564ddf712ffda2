import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { html } from '../../lib/html.js'
import { makeAsset, type Asset } from './assets.js'
import { pageHeader } from './html.js'

/**
 * The API reference at /docs: Redoc (the `redoc` package's standalone bundle, served by this host from
 * node_modules) rendering /openapi.json. Redoc 2 runs entirely in the page: no fonts, no telemetry, no calls
 * of its own beyond the document; search runs in a worker made from a blob.
 */

const require = createRequire(import.meta.url)
export const REDOC_VERSION: string = require('redoc/package.json').version

/**
 * The one remote resource in the bundle: the attribution's logo, an <img> fetched from Redocly's CDN. It is
 * pointed at an empty data URL, so the image fails locally and Redoc drops it (the "API docs by Redocly" text stays).
 */
const REDOCLY_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg'

/** The bundle as served: the logo kept local, the source-map comment dropped (the map is not served). */
export function redocBundle(): Asset {
  const source = readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8')
  return makeAsset(
    source
      .split(REDOCLY_LOGO)
      .join('data:,')
      .replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'),
    'text/javascript; charset=utf-8',
  )
}

const SYSTEM_FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif'
const MONO_FONT = 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace'

/** Redoc's options (redoc.ly docs, "Redoc configuration"): what a reader of this API needs expanded and shown. */
export const REDOC_OPTIONS = {
  // Success bodies open with their examples; the errors stay one line each until opened.
  expandResponses: '200,201,202',
  jsonSampleExpandLevel: 'all',
  requiredPropsFirst: true,
  showObjectSchemaExamples: true,
  // The service's own marks: the scope an operation needs, its capability rule, sandbox-only simulators.
  showExtensions: ['x-svc-scope', 'x-svc-capability', 'x-svc-sandbox-only'],
  maxDisplayedEnumValues: 24,
  nativeScrollbars: true,
  downloadFileName: 'openapi.json',
  theme: {
    typography: {
      fontFamily: SYSTEM_FONT,
      fontSize: '15px',
      headings: { fontFamily: SYSTEM_FONT, fontWeight: '600' },
      code: { fontFamily: MONO_FONT },
    },
    // Redoc's green on its tinted response header measures 4.3:1 (axe wants 4.5:1 for its 13 px text): a darker green.
    colors: { primary: { main: '#0a2540' }, responses: { success: { color: '#17692a' } } },
    sidebar: { width: '280px' },
  },
}

/** The script that starts Redoc on the page (a file, so the page's policy allows scripts from this host only). */
export function referenceScript(): Asset {
  return makeAsset(
    `(function () {
  var el = document.getElementById('redoc');
  Redoc.init(el.getAttribute('data-spec-url'), ${JSON.stringify(REDOC_OPTIONS)}, el, function (err) {
    if (err) el.textContent = 'The API reference could not be shown (' + (err.message || err) + '). The document itself is at /openapi.json.';
  });
})();
`,
    'text/javascript; charset=utf-8',
  )
}

/**
 * Redoc writes its styles into <style> elements (hence 'unsafe-inline' for styles only); its search index runs
 * in a worker built from a blob. Everything else comes from this host, and nothing may be sent anywhere else.
 */
export const REFERENCE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; worker-src blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

export function referencePage(): string {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>svc API reference</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/docs/assets/docs.css"></head><body class="reference">
${pageHeader('/docs')}
<main id="main"><div id="redoc" data-spec-url="/openapi.json"><p class="loading">Loading the API reference…</p>
<noscript><p>The reference needs JavaScript. Without it: the OpenAPI document at <a href="/openapi.json">/openapi.json</a>,
the <a href="/docs/guides">guides</a> and the <a href="/docs/errors">error catalogue</a>.</p></noscript></div></main>
<script src="/docs/assets/redoc.standalone.js?v=${REDOC_VERSION}"></script><script src="/docs/assets/reference.js"></script>
</body></html>`.text
}
