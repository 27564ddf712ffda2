import { deref, type ExampleContext, parameterExample } from './openapi-examples.js'
import { SDK_METHODS } from './openapi-sdk.js'

/**
 * The reference's code samples (`x-codeSamples`, shown by the reference at /docs beside each operation): a curl call and the
 * `@svc/sdk` call, both built from the operation's request example and its parameters' examples, so they show the
 * same ids and body as the request body example. `$SVC_BASE_URL` and `$SVC_TOKEN` are set as the reference's first section
 * ("Getting an access token") says.
 */

type Operation = Record<string, any>

export interface CodeSample {
  lang: 'Shell' | 'JavaScript'
  label: 'curl' | 'SDK'
  source: string
}

export interface SampleInput {
  method: string
  path: string
  op: Operation
  ctx: ExampleContext
  /** The operation uses an `Idempotency-Key` (a `/v1` POST or PATCH whose key is not merely accepted). */
  usesKey: boolean
}

interface Body {
  type: string
  value: unknown
}

/** The example the operation shows for its request body: the media's own, else its schema's. */
export function requestExample(op: Operation, ctx: ExampleContext): Body | undefined {
  for (const [type, media] of Object.entries<Record<string, any>>(op.requestBody?.content ?? {})) {
    if (media.example !== undefined) return { type, value: media.example }
    const first = Object.values<Record<string, any>>(media.examples ?? {})[0]
    if (first?.value !== undefined) return { type, value: first.value }
    const own = deref(media.schema, ctx).examples
    if (Array.isArray(own) && own.length > 0) return { type, value: own[0] }
  }
  return undefined
}

const isEmptyObject = (v: unknown) =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0

/** The 2xx answer's schema and media type. */
function success(
  op: Operation,
  ctx: ExampleContext,
): { schema: Record<string, any>; ref?: string; type?: string } {
  for (const [status, response] of Object.entries<Record<string, any>>(op.responses ?? {})) {
    if (!status.startsWith('2')) continue
    for (const [type, media] of Object.entries<Record<string, any>>(response.content ?? {})) {
      const ref =
        typeof media.schema?.$ref === 'string' ? media.schema.$ref.split('/').pop() : undefined
      return { schema: deref(media.schema, ctx), ref, type }
    }
  }
  return { schema: {} }
}

function isList(op: Operation, ctx: ExampleContext): boolean {
  return success(op, ctx).schema.properties?.has_more !== undefined
}

function pathWithIds(input: SampleInput): string {
  const params: Record<string, any>[] = input.op.parameters ?? []
  return input.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const param = params.find((p) => p.in === 'path' && p.name === name) ?? { name }
    return encodeURIComponent(String(parameterExample(param as never, input.path, input.ctx)))
  })
}

/** The query a sample sends: the required parameters, and a page size on a list. */
function query(input: SampleInput): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const p of input.op.parameters ?? []) {
    if (p.in === 'query' && p.required) out[p.name] = parameterExample(p, input.path, input.ctx)
  }
  const takesLimit = (input.op.parameters ?? []).some(
    (p: any) => p.in === 'query' && p.name === 'limit',
  )
  if (takesLimit && isList(input.op, input.ctx)) out.limit = 10
  return out
}

/** Columns a sample's object stays on one line within: the reference's sample column is narrow. */
const SAMPLE_WIDTH = 56

const shellDouble = (s: string) => s.replace(/[\\"$`]/g, (c) => `\\${c}`)
const shellSingle = (s: string) => s.replace(/'/g, `'\\''`)

export function curlSample(input: SampleInput): string {
  const method = input.method.toUpperCase()
  const q = new URLSearchParams(
    Object.entries(query(input)).map(([k, v]) => [k, String(v)]),
  ).toString()
  const url = `$SVC_BASE_URL${pathWithIds(input)}${q ? `?${q}` : ''}`
  const stream = success(input.op, input.ctx).type === 'text/event-stream'
  const head = `curl${stream ? ' -N' : ''}${method === 'GET' ? '' : ` -X ${method}`} "${url}"`
  const args: string[] = []
  if (input.path.startsWith('/v1/')) args.push('-H "Authorization: Bearer $SVC_TOKEN"')
  if (input.path.startsWith('/operator/'))
    args.push('-H "Authorization: Bearer $SVC_OPERATOR_TOKEN"')
  if (input.usesKey) args.push('-H "Idempotency-Key: $(uuidgen)"')
  const body = requestExample(input.op, input.ctx)
  if (body && body.type === 'application/x-www-form-urlencoded') {
    // The assertion is the caller's own signed JWT: the sample reads it from a variable.
    for (const [k, v] of Object.entries(body.value as Record<string, unknown>))
      args.push(
        k === 'client_assertion'
          ? `--data-urlencode "${k}=$ASSERTION"`
          : `--data-urlencode "${shellDouble(`${k}=${v}`)}"`,
      )
  } else if (body && !isEmptyObject(body.value)) {
    const json = literal(body.value, true, '  ', SAMPLE_WIDTH)
    args.push('-H "Content-Type: application/json"', `-d '${shellSingle(json)}'`)
  }
  return [head, ...args.map((a) => `  ${a}`)].join(' \\\n')
}

/**
 * A JSON value written as JavaScript (unquoted keys, single quotes) or as JSON: one line when it fits in `width`,
 * else one member per line.
 */
export function literal(value: unknown, json: boolean, indent = '', width = 80): string {
  const flat = flatLiteral(value, json)
  if (flat.length + indent.length <= width || typeof value !== 'object' || value === null)
    return flat
  const inner = `${indent}  `
  const comma = json ? '' : ','
  const members = Array.isArray(value)
    ? value.map((v) => `${inner}${literal(v, json, inner, width)}`)
    : Object.entries(value).map(
        ([k, v]) => `${inner}${memberName(k, json)}: ${literal(v, json, inner, width)}`,
      )
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}']
  return `${open}\n${members.join(`,\n`)}${comma}\n${indent}${close}`
}

const memberName = (k: string, json: boolean) =>
  !json && /^[A-Za-z_$][\w$]*$/.test(k) ? k : text(k, json)
const text = (s: string, json: boolean) =>
  json
    ? JSON.stringify(s)
    : `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`

function flatLiteral(value: unknown, json: boolean): string {
  if (typeof value === 'string') return text(value, json)
  if (Array.isArray(value)) return `[${value.map((v) => flatLiteral(v, json)).join(', ')}]`
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).map(
      ([k, v]) => `${memberName(k, json)}: ${flatLiteral(v, json)}`,
    )
    if (entries.length === 0) return '{}'
    return json ? `{${entries.join(', ')}}` : `{ ${entries.join(', ')} }`
  }
  return JSON.stringify(value)
}

const jsLiteral = (value: unknown) => literal(value, false, '', SAMPLE_WIDTH)
const jsString = (s: string) => text(s, false)

/** What the sample calls its answer: the schema's name (`Card` → `card`), or its list's items'. */
function resultName(op: Operation, ctx: ExampleContext, item: boolean): string | undefined {
  const answer = success(op, ctx)
  const ref = item
    ? (answer.schema.properties?.data?.items?.$ref as string | undefined)?.split('/').pop()
    : answer.ref
  if (ref?.endsWith('Deleted')) return 'deleted'
  // `OAuthClient` → `oauthClient`, `EsimOrder` → `esimOrder`.
  if (ref) return ref.replace(/^[A-Z]+/, (head) => head.toLowerCase())
  if (answer.type === 'text/csv') return 'csv'
  return answer.type ? (item ? 'item' : 'result') : undefined
}

/** The SDK sample, or undefined when the operation has no entry in SDK_METHODS (operator and platform routes). */
export function sdkSample(input: SampleInput): string | undefined {
  const key = `${input.method.toUpperCase()} ${input.path}`
  if (!(key in SDK_METHODS)) return undefined
  const entry = SDK_METHODS[key]
  if (entry && typeof entry === 'object') return entry.source
  const list = isList(input.op, input.ctx)
  const ids = (input.path.match(/\{[^}]+\}/g) ?? []).length
  const path = pathWithIds(input)
  const body = requestExample(input.op, input.ctx)
  const bodyArg = body && !isEmptyObject(body.value) ? body.value : undefined
  const q = query(input)
  const queryArg = Object.keys(q).length > 0 ? q : undefined
  let call: string
  if (entry === null) {
    const spec: Record<string, unknown> = { method: input.method.toUpperCase(), path }
    if (list)
      call = `svc.core.list(${[jsString(path), ...(queryArg ? [jsLiteral(queryArg)] : [])].join(', ')})`
    else {
      if (queryArg) spec.query = queryArg
      if (bodyArg !== undefined) spec.body = bodyArg
      call = `svc.core.request(${jsLiteral(spec)})`
    }
  } else {
    const values = path
      .split('/')
      .filter((_s, i) => input.path.split('/')[i]?.startsWith('{'))
      .map((s) => jsString(decodeURIComponent(s)))
    const extra = input.method === 'get' ? queryArg : bodyArg
    const args = [...values.slice(0, ids), ...(extra === undefined ? [] : [jsLiteral(extra)])]
    call = `svc.${entry}(${args.join(', ')})`
  }
  if (list) {
    const item = resultName(input.op, input.ctx, true)
    return `for await (const ${item} of ${call}) console.log(${item}.id)`
  }
  const name = resultName(input.op, input.ctx, false)
  return name ? `const ${name} = await ${call}` : `await ${call}`
}

/** Both samples of an operation; curl alone where the SDK has no entry. */
export function codeSamples(input: SampleInput): CodeSample[] {
  const samples: CodeSample[] = [{ lang: 'Shell', label: 'curl', source: curlSample(input) }]
  const sdk = sdkSample(input)
  if (sdk) samples.push({ lang: 'JavaScript', label: 'SDK', source: sdk })
  return samples
}
