import { STATUS_CODES } from 'node:http'
import { documentIds, type ExampleContext, exampleOf } from '../../http/openapi-examples.js'
import { attrs, html, type Html, lines, raw } from '../../lib/html.js'
import { pageHeader } from './html.js'
import { blocks, inline } from './reference-markdown.js'
import {
  fieldRows,
  fieldTable,
  refName,
  resolve,
  type SchemaContext,
  typeLabel,
} from './reference-schema.js'

/**
 * The API reference at /docs, rendered on the server from the OpenAPI document (/openapi.json) once per process:
 * the introduction (getting a token first), then a section per tag with its objects and its operations, each with
 * its parameters, request body fields, responses, error codes, request example and code samples (`x-codeSamples`:
 * curl and the SDK). The page needs no script; a small one adds a search box that filters the navigation.
 * Why not Redoc any more: docs/decisions/api-reference-renderer.md.
 */

type Node = Record<string, any>

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const

export interface Operation {
  method: string
  path: string
  op: Node
  tag: string
  /** The anchor, Redoc's form, so links written for it still land: `tag/Cards/paths/~1v1~1cards/post`. */
  id: string
}

const pointer = (path: string) => path.replace(/~/g, '~0').replace(/\//g, '~1')

/** `Getting an access token` → `Getting-an-access-token` (Redoc's section anchors). */
const slug = (text: string) =>
  text
    .trim()
    .replace(/[^\p{L}\p{N}:._-]+/gu, '-')
    .replace(/^-+|-+$/g, '')

export function operations(doc: Node): Operation[] {
  const out: Operation[] = []
  for (const [path, item] of Object.entries<Node>(doc.paths ?? {}))
    for (const method of METHODS) {
      const op = item?.[method]
      if (!op) continue
      const tag = op.tags?.[0] ?? 'Other'
      out.push({ method, path, op, tag, id: `tag/${tag}/paths/${pointer(path)}/${method}` })
    }
  return out
}

interface SectionEntry {
  id: string
  title: string
  children: { id: string; title: string }[]
}

/** The introduction (`info.description`): its lead paragraph, then its sections, `#` as h2 and `##` as h3. */
function introduction(description: string): { lead: Html; body: Html; toc: SectionEntry[] } {
  const at = description.search(/^# /m)
  const lead = at < 0 ? description : description.slice(0, at)
  const rest = at < 0 ? '' : description.slice(at)
  const toc: SectionEntry[] = []
  const body = blocks(rest, (depth, text, inner) => {
    if (depth === 1) {
      const id = `section/${slug(text)}`
      toc.push({ id, title: text, children: [] })
      // elementtiming: the browser reports when the heading is first painted (bench/docs.ts reads it).
      return html`<h2 id="${id}" elementtiming="${id}">${raw(inner)}</h2>\n`.text
    }
    const parent = toc[toc.length - 1]
    const id = `${parent ? `${parent.id}/` : 'section/'}${slug(text)}`
    if (depth === 2) parent?.children.push({ id, title: text })
    const level = Math.min(depth + 1, 6)
    return html`<h${level} id="${id}">${raw(inner)}</h${level}>\n`.text
  })
  return { lead: blocks(lead), body, toc }
}

/** The components the reference describes once, in a section of its own: every object a 2xx answer returns. */
function objectSections(ops: Operation[], doc: Node): Map<string, { anchor: string; tag: string }> {
  const components: Node = doc.components?.schemas ?? {}
  const out = new Map<string, { anchor: string; tag: string }>()
  const add = (name: string | undefined, tag: string) => {
    if (!name || out.has(name) || !components[name]?.properties) return
    out.set(name, { anchor: `schemas/${name}`, tag })
  }
  const visit = (schema: unknown, tag: string) => {
    const name = refName(schema)
    const s: Node = name ? (components[name] ?? {}) : ((schema ?? {}) as Node)
    if (s.properties?.has_more && s.properties?.data) return visit(s.properties.data.items, tag)
    for (const branch of s.anyOf ?? s.oneOf ?? []) visit(branch, tag)
    add(name, tag)
  }
  for (const { op, tag } of ops)
    for (const [status, response] of Object.entries<Node>(op.responses ?? {}))
      if (status.startsWith('2'))
        for (const media of Object.values<Node>(response.content ?? {})) visit(media.schema, tag)
  return out
}

const json = (value: unknown) => JSON.stringify(value, null, 2)

function codeFigure(caption: string, source: string, language: string): Html {
  return html`<figure class="sample"><figcaption>${caption}</figcaption><pre><code class="language-${language}">${source}</code></pre></figure>`
}

function methodBadge(method: string): Html {
  return html`<span class="method ${method}">${method.toUpperCase()}</span>`
}

function authorization(op: Node): Html {
  const scheme = Object.keys(op.security?.[0] ?? {})[0]
  if (scheme === 'bearer')
    return html`An access token (<a href="#section/Getting-an-access-token">getting one</a>)`
  if (scheme === 'operator') return html`The operator token, <code>SVC_OPERATOR_TOKEN</code>`
  return html`None`
}

function meta(op: Node): Html {
  const items: Html[] = [html`<dt>Authorization</dt><dd>${authorization(op)}</dd>`]
  if (op['x-svc-scope']) items.push(html`<dt>Scope</dt><dd><code>${op['x-svc-scope']}</code></dd>`)
  if (op['x-svc-capability'])
    items.push(
      html`<dt>Capability</dt><dd><code>${op['x-svc-capability']}</code> (the program must have it)</dd>`,
    )
  if (op['x-svc-sandbox-only']) items.push(html`<dt>Sandbox only</dt><dd>404 in production</dd>`)
  return html`<dl class="meta">${items}</dl>`
}

function parameterTable(params: Node[], ctx: SchemaContext): Html {
  const shown = params.filter((p) => p.in !== 'header' || p.name === 'Idempotency-Key')
  if (shown.length === 0) return html``
  const rows = shown.map((p) => {
    const s = resolve(p.schema, ctx)
    return {
      name: p.name,
      depth: 0,
      type: html`${p.in} · ${typeLabel(p.schema ?? {}, ctx)}`,
      required: !!p.required,
      description: html`${p.description ? inline(p.description) : ''}${s.default !== undefined ? html` Default <code>${JSON.stringify(s.default)}</code>.` : ''}${Array.isArray(s.enum) ? html` One of ${s.enum.map((v: unknown, i: number) => html`${i ? ', ' : ''}<code>${JSON.stringify(v)}</code>`)}.` : ''}`,
    }
  })
  return html`<h4>Parameters</h4>${fieldTable(rows, 'Parameters')}`
}

function requestBody(op: Node, ctx: SchemaContext): Html {
  const content = Object.entries<Node>(op.requestBody?.content ?? {})
  if (content.length === 0) return html``
  const [type, media] = content[0]
  const rows = fieldRows(media.schema, ctx)
  return html`<h4>Request body</h4>
<p>${type === 'application/json' ? '' : html`<code>${type}</code>. `}${op.requestBody.required ? 'Required.' : 'Optional.'}${rows.length === 0 ? ' No fields: send {}.' : ''}</p>
${fieldTable(rows, 'Request body fields')}`
}

/** The example a request body shows: the media's, else its schema's. */
function requestExample(
  op: Node,
  ctx: ExampleContext,
): { type: string; value: unknown } | undefined {
  for (const [type, media] of Object.entries<Node>(op.requestBody?.content ?? {})) {
    if (media.example !== undefined) return { type, value: media.example }
    const first = Object.values<Node>(media.examples ?? {})[0]
    if (first?.value !== undefined) return { type, value: first.value }
    return { type, value: exampleOf(media.schema ?? {}, ctx) }
  }
  return undefined
}

function errorCodes(response: Node): Html {
  const description = String(response.description ?? '')
  const codes = [...description.matchAll(/`([a-z0-9_]+)`/g)].map((m) => m[1])
  const media = Object.values<Node>(response.content ?? {})[0]
  const oauth = refName(media?.schema) === 'OAuthError'
  if (codes.length === 0) return inline(description)
  return html`${codes.map((c, i) => html`${i ? ', ' : ''}<a class="code" href="/docs/errors#${oauth ? `oauth-${c}` : c}">${c}</a>`)}`
}

interface RenderContext {
  schemas: SchemaContext
  examples: ExampleContext
  /** `components.responses`: the error responses operations share by `$ref`. */
  shared: Node
}

function responses(op: Node, { schemas, examples, shared }: RenderContext) {
  const success: Html[] = []
  const samples: Html[] = []
  const errors: Html[] = []
  for (const [status, given] of Object.entries<Node>(op.responses ?? {})) {
    const response: Node =
      typeof given.$ref === 'string' ? (shared[refName(given)!] ?? given) : given
    if (!status.startsWith('2')) {
      errors.push(html`<tr><td>${status}</td><td>${errorCodes(response)}</td></tr>`)
      continue
    }
    const name = STATUS_CODES[Number(status)] ?? ''
    const [type, media] = Object.entries<Node>(response.content ?? {})[0] ?? []
    const headers = Object.entries<Node>(response.headers ?? {}).filter(([, h]) => !h.$ref)
    const body: Html[] = []
    if (response.description && response.description !== name)
      body.push(html`<p>${inline(response.description)}</p>`)
    if (media) {
      const component = refName(media.schema)
      const section = component ? schemas.sections.get(component) : undefined
      const listed = resolve(media.schema, schemas)
      if (section) body.push(html`<p>Body: the <a href="#${section}">${component}</a> object.</p>`)
      else if (type !== 'application/json') body.push(html`<p>Body: <code>${type}</code>.</p>`)
      else {
        const rows = fieldRows(media.schema, schemas)
        if (rows.length && listed.properties?.has_more)
          body.push(
            html`<p>Body: a page of the list (<code>data</code>, <code>has_more</code>, <code>next_cursor</code>).</p>`,
          )
        else if (rows.length) body.push(html`<p>Body:</p>`)
        else body.push(html`<p>Body: ${typeLabel(media.schema, schemas)}.</p>`)
        body.push(fieldTable(rows, `${status} body fields`))
      }
      // An object with a section of its own shows its example there; here only an example of this operation's own.
      const own = media.example ?? Object.values<Node>(media.examples ?? {})[0]?.value
      if (type === 'application/json' && (own !== undefined || !section)) {
        const value = own ?? exampleOf(media.schema ?? {}, examples)
        samples.push(codeFigure(`${status} ${name} example`, json(value), 'json'))
      }
    }
    if (headers.length)
      body.push(
        html`<p>Headers: ${headers.map(([h, spec], i) => html`${i ? '; ' : ''}<code>${h}</code>${spec.description ? html` (${inline(spec.description)})` : ''}`)}</p>`,
      )
    success.push(html`<h5>${status} ${name}</h5>${body}`)
  }
  const errorTable = errors.length
    ? html`<table class="errors"><caption>Errors (codes in the <a href="/docs/errors">error catalogue</a>)</caption><thead><tr><th scope="col">status</th><th scope="col">codes</th></tr></thead><tbody>${errors}</tbody></table>`
    : html``
  return { doc: html`<h4>Responses</h4>${success}${errorTable}`, samples }
}

function operation(o: Operation, ctx: RenderContext): Html {
  const { op } = o
  const { schemas, examples } = ctx
  const request = requestExample(op, examples)
  const { doc: answers, samples: answerSamples } = responses(op, ctx)
  const code: Html[] = []
  if (request)
    code.push(
      codeFigure(
        'Request body example',
        request.type === 'application/json'
          ? json(request.value)
          : new URLSearchParams(request.value as Record<string, string>)
              .toString()
              .replace(/&/g, '\n&'),
        request.type === 'application/json' ? 'json' : 'text',
      ),
    )
  for (const sample of op['x-codeSamples'] ?? [])
    code.push(codeFigure(sample.label, sample.source, sample.lang === 'Shell' ? 'sh' : 'js'))
  code.push(...answerSamples)
  return html`<section class="op" id="${o.id}">
<div class="op-doc">
<h3>${op.summary ?? `${o.method.toUpperCase()} ${o.path}`}</h3>
<p class="endpoint">${methodBadge(o.method)} <code>${o.path}</code></p>
${meta(op)}
${op.description ? blocks(op.description) : ''}
${parameterTable(op.parameters ?? [], schemas)}
${requestBody(op, schemas)}
${answers}
</div>
<div class="op-code">${code}</div>
</section>`
}

function objectSection(
  name: string,
  anchor: string,
  schemas: SchemaContext,
  examples: ExampleContext,
): Html {
  const s = schemas.components[name]
  const example = exampleOf({ $ref: `#/components/schemas/${name}` }, examples)
  return html`<section class="object" id="${anchor}">
<div class="op-doc"><h3>The ${name} object</h3>
${s.description ? blocks(s.description) : ''}
${fieldTable(fieldRows(s, schemas), `${name} fields`)}</div>
<div class="op-code">${codeFigure(`${name} example`, json(example), 'json')}</div>
</section>`
}

export interface ReferenceAssets {
  css: string[]
  script: string
}

/** The whole reference page for `doc` (the served OpenAPI document). */
export function referencePage(doc: Node, assets: ReferenceAssets): string {
  const components: Node = doc.components?.schemas ?? {}
  const ops = operations(doc)
  const sections = objectSections(ops, doc)
  const schemas: SchemaContext = {
    components,
    sections: new Map([...sections].map(([name, s]) => [name, s.anchor])),
  }
  const examples: ExampleContext = { components, ids: documentIds(components) }
  const ctx: RenderContext = { schemas, examples, shared: doc.components?.responses ?? {} }
  const intro = introduction(String(doc.info?.description ?? ''))
  const tagNames: string[] = (doc.tags ?? []).map((t: Node) => t.name)
  for (const o of ops) if (!tagNames.includes(o.tag)) tagNames.push(o.tag)
  const tagInfo = new Map<string, Node>((doc.tags ?? []).map((t: Node) => [t.name, t]))

  const errorSchema = components.Error
  const errorsSection = errorSchema
    ? html`<h2 id="section/Errors">Errors</h2>
<p>A <code>/v1</code> or operator error answers this envelope, with the <code>Svc-Request-Id</code> header as on every answer.
Branch on <code>error.code</code>: each is explained in the <a href="/docs/errors">error catalogue</a>, and each operation
below lists the codes it can answer by status. The token endpoint answers the OAuth shape instead
(<code>{"error", "error_description"}</code>).</p>
${fieldTable(fieldRows(errorSchema, schemas), 'The error envelope')}`
    : html``
  const toc: SectionEntry[] = [
    ...intro.toc,
    ...(errorSchema ? [{ id: 'section/Errors', title: 'Errors', children: [] }] : []),
  ]

  const tagSections = tagNames.map((tag) => {
    const mine = ops.filter((o) => o.tag === tag)
    const info = tagInfo.get(tag)
    const objects = [...sections].filter(([, s]) => s.tag === tag)
    const index = mine.map(
      (o) =>
        html`<li><a href="#${o.id}">${methodBadge(o.method)} ${o.op.summary ?? o.path}</a></li>`,
    )
    return html`<section class="tag" id="tag/${tag}">
<h2>${tag}</h2>
${info?.description ? blocks(info.description) : ''}
<ul class="op-index">${lines(index)}</ul>
${objects.map(([name, s]) => objectSection(name, s.anchor, schemas, examples))}
${mine.map((o) => operation(o, ctx))}
</section>`
  })

  const navSections = toc.map((s) => html`<li><a href="#${s.id}">${s.title}</a></li>`)
  const navTags = tagNames.map((tag) => {
    const items = ops
      .filter((o) => o.tag === tag)
      .map(
        (o) =>
          html`<li${attrs({ 'data-path': `${o.method} ${o.path}` })}><a href="#${o.id}">${methodBadge(o.method)} ${o.op.summary ?? o.path}</a></li>`,
      )
    return html`<li class="tag"><a href="#tag/${tag}">${tag}</a><ul>${lines(items)}</ul></li>`
  })

  const styles = assets.css.map((href) => html`<link rel="stylesheet" href="${href}">`)
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>svc API reference</title><link rel="icon" href="data:,">${styles}<script src="${assets.script}" defer></script></head><body class="reference">
${pageHeader('/docs')}
<div class="ref">
<nav class="ref-nav" aria-label="API reference"><div id="ref-search"></div>
<ul class="toc">${lines(navSections)}
${lines(navTags)}</ul></nav>
<main id="main" class="ref-main">
<h1>${doc.info?.title ?? 'API reference'}</h1>
<div class="lead">${intro.lead}<p>The document itself: <a href="/openapi.json">/openapi.json</a> (OpenAPI ${doc.openapi ?? '3.1'}).</p></div>
${intro.body}
${errorsSection}
${lines(tagSections)}
</main></div>
</body></html>`.text
}

/** The policy of the reference: this host's stylesheets and its one script (the search box), nothing else. */
export const REFERENCE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
