import type { FastifyInstance } from 'fastify'
import { ERROR_CATALOGUE } from '../../http/errors.js'
import { escapeHtml, page } from './html.js'

function errorsPage(): string {
  const rows = Object.entries(ERROR_CATALOGUE).map(([code, spec]) => `<tr id="${code}">
<td><a href="#${code}"><code>${code}</code></a></td><td>${spec.status}</td><td><code>${spec.type}</code></td>
<td>${spec.retryable ? 'yes' : 'no'}</td><td>${escapeHtml(spec.description)}</td></tr>`).join('\n')
  return page('svc API errors', `<p>Every <code>/v1</code> error answers <code>{"error": {type, code, message, param, doc_url, request_id}}</code>.
Branch on <code>code</code>; <code>message</code> is for people and may change. When several fields fail, <code>code</code> is
<code>invalid_parameter</code> and <code>errors</code> lists <code>{code, param, message}</code> per field.
The token endpoint answers the flat OAuth shape <code>{error, error_description}</code> instead.</p>
<table><thead><tr><th>code</th><th>status</th><th>type</th><th>retryable</th><th>meaning</th></tr></thead><tbody>${rows}</tbody></table>`)
}

/** A schema, with a `#/components/schemas/…` reference followed once. */
function resolve(schema: Record<string, any> | undefined, doc: Record<string, any>): Record<string, any> | undefined {
  const ref = typeof schema?.$ref === 'string' ? /^#\/components\/schemas\/(.+)$/.exec(schema.$ref) : null
  return ref ? doc.components?.schemas?.[ref[1]] ?? schema : schema
}

function schemaSummary(raw: Record<string, any> | undefined, doc: Record<string, any>): string {
  const schema = resolve(raw, doc)
  if (!schema) return ''
  const props = schema.properties as Record<string, any> | undefined
  if (!props) return `<code>${escapeHtml(schema.type ?? schema.$ref ?? '')}</code>`
  const required = new Set<string>(schema.required ?? [])
  return `<table><tr><th>field</th><th>type</th><th>notes</th></tr>${Object.entries(props).map(([name, p]) => `<tr><td><code>${escapeHtml(name)}</code>${required.has(name) ? ' <b>required</b>' : ''}</td>
<td>${escapeHtml(p.type ?? (p.enum ? 'enum' : p.anyOf ? 'one of' : p.$ref ? String(p.$ref).split('/').pop() : 'object'))}${p.enum ? ': ' + p.enum.map((v: unknown) => `<code>${escapeHtml(v)}</code>`).join(' ') : ''}</td>
<td>${escapeHtml(p.description ?? '')}</td></tr>`).join('')}</table>`
}

function referencePage(doc: Record<string, any>): string {
  const sections = new Map<string, string[]>()
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<Record<string, any>>(item)) {
      const tag = op.tags?.[0] ?? 'other'
      const params = (op.parameters ?? []).map((p: any) => `<code>${escapeHtml(p.name)}</code> (${p.in}${p.required ? ', required' : ''})`).join(', ')
      const body = op.requestBody?.content?.['application/json']?.schema ?? op.requestBody?.content?.['application/x-www-form-urlencoded']?.schema
      const responses = Object.entries<Record<string, any>>(op.responses ?? {}).map(([status, r]) => `<li><b>${status}</b> ${escapeHtml(r.description ?? '')}</li>`).join('')
      const html = `<div class="op" id="${escapeHtml(op.operationId ?? method + path)}"><span class="m ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code>
${op['x-svc-scope'] ? `<span class="tag">scope ${escapeHtml(op['x-svc-scope'])}</span>` : ''}${op['x-svc-capability'] ? `<span class="tag">x-svc-capability ${escapeHtml(op['x-svc-capability'])}</span>` : ''}${op['x-svc-sandbox-only'] ? '<span class="tag">sandbox only</span>' : ''}
<p>${escapeHtml(op.summary ?? '')}${op.description ? '<br>' + escapeHtml(op.description) : ''}</p>
${params ? `<p>Parameters: ${params}</p>` : ''}${body ? `<p>Body${body.$ref ? ` (<code>${escapeHtml(String(body.$ref).split('/').pop())}</code>)` : ''}:</p>${schemaSummary(body, doc)}` : ''}<ul>${responses}</ul></div>`
      sections.set(tag, [...(sections.get(tag) ?? []), html])
    }
  }
  const toc = [...sections.keys()].map((t) => `<a href="#tag-${escapeHtml(t)}">${escapeHtml(t)}</a>`).join(' · ')
  const body = [...sections.entries()].map(([tag, ops]) => `<h2 id="tag-${escapeHtml(tag)}">${escapeHtml(tag)}</h2>${ops.join('\n')}`).join('\n')
  return page(`${doc.info?.title ?? 'API'} ${doc.info?.version ?? ''}`, `<p>${escapeHtml(doc.info?.description ?? '')}</p><p>${toc}</p>${body}`)
}

/** Human-readable pages: the API reference rendered from the OpenAPI document, and the error catalogue. */
export function registerDocs(app: FastifyInstance): void {
  const errorsHtml = errorsPage()
  let referenceHtml: string | null = null
  app.get('/docs/errors', { config: { public: true }, schema: { hide: true } }, async (_req, reply) => reply.type('text/html; charset=utf-8').send(errorsHtml))
  app.get('/docs', { config: { public: true }, schema: { hide: true } }, async (_req, reply) => {
    referenceHtml ??= referencePage(app.swagger() as Record<string, any>)
    return reply.type('text/html; charset=utf-8').send(referenceHtml)
  })
}
