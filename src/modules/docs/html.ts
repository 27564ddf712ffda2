import { escapeHtml } from '../../lib/html.js'

export { escapeHtml }

export const DOCS_CSS = `
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1a1f36;background:#f6f8fa}
header{background:#0a2540;color:#fff;padding:18px 32px}header a{color:#9fd3ff;margin-right:16px}
main{max-width:1100px;margin:0 auto;padding:24px 32px}
h1{font-size:22px;margin:0}h2{margin-top:36px;border-bottom:1px solid #d8dee4;padding-bottom:4px}
table{border-collapse:collapse;width:100%;background:#fff}td,th{border:1px solid #e3e8ee;padding:6px 10px;text-align:left;vertical-align:top}
th{background:#f0f3f6}code{font:13px ui-monospace,SFMono-Regular,Menlo,monospace;background:#eef1f4;padding:1px 4px;border-radius:3px}
tr:target{background:#fff8c5}.op{background:#fff;border:1px solid #e3e8ee;border-radius:6px;margin:12px 0;padding:12px 16px}
.m{display:inline-block;min-width:56px;font-weight:600;font-family:ui-monospace,monospace}.get{color:#0a7d38}.post{color:#0055cc}.patch{color:#a15c00}.delete{color:#c0262d}.put{color:#6b3fa0}
.tag{font-size:12px;background:#eef1f4;border-radius:10px;padding:1px 8px;margin-left:6px}pre{background:#0a2540;color:#e6edf3;padding:10px;border-radius:6px;overflow:auto;font-size:12px}
`

export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${DOCS_CSS}</style></head><body>
<header><h1>${escapeHtml(title)}</h1><nav><a href="/docs">API reference</a><a href="/docs/errors">Errors</a><a href="/openapi.json">openapi.json</a></nav></header>
<main>${body}</main></body></html>`
}
