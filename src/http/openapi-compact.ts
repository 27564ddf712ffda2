/**
 * What keeps /openapi.json small without losing anything a reader sees: the headers every response repeats, and
 * every error response two operations or more answer alike (`401` with `missing_credentials`,
 * `invalid_access_token` on each `/v1` operation), are components referred to by `$ref`; a response example that
 * only repeats its schema's own `examples` is dropped (the renderer shows the schema's); and the request validator's
 * own wording (`x-refusals`, `x-refusal`, `x-unknown-hints`: the messages of a refused value) stays out of the
 * published schemas.
 */

type Node = Record<string, any>

export const REQUEST_ID_HEADER_REF = { $ref: '#/components/headers/Svc-Request-Id' }
export const RETRY_AFTER_HEADER_REF = { $ref: '#/components/headers/Retry-After' }

export const SHARED_HEADERS = {
  'Svc-Request-Id': {
    description: 'Request id (`req_…`), also in every error body.',
    schema: { type: 'string', pattern: '^req_' },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 1 },
  },
}

const VALIDATOR_ONLY = ['x-refusals', 'x-refusal', 'x-unknown-hints']

/** A copy without the validator's wording (route schemas may share these objects: they are never changed). */
function withoutValidatorWording<T>(node: T): T {
  if (Array.isArray(node)) return node.map(withoutValidatorWording) as T
  if (!node || typeof node !== 'object') return node
  const out: Node = {}
  for (const [key, value] of Object.entries(node as Node)) {
    if (VALIDATOR_ONLY.includes(key)) continue
    out[key] = key === 'examples' || key === 'example' ? value : withoutValidatorWording(value)
  }
  return out as T
}

/** Drops each 2xx example that is one of the `examples` of the component its schema refers to. */
function dropRepeatedExamples(doc: Node): void {
  const schemas: Node = doc.components?.schemas ?? {}
  for (const item of Object.values<Node>(doc.paths ?? {})) {
    for (const op of Object.values<Node>(item)) {
      for (const response of Object.values<Node>(op?.responses ?? {})) {
        for (const media of Object.values<Node>(response?.content ?? {})) {
          const ref = media.schema?.$ref
          const own =
            typeof ref === 'string' ? schemas[ref.split('/').pop() as string]?.examples : undefined
          if (!Array.isArray(own)) continue
          const shown = new Set(own.map((e: unknown) => JSON.stringify(e)))
          if (media.example !== undefined && shown.has(JSON.stringify(media.example)))
            delete media.example
          if (media.examples && typeof media.examples === 'object') {
            for (const [name, ex] of Object.entries<Node>(media.examples))
              if (shown.has(JSON.stringify(ex?.value))) delete media.examples[name]
            if (Object.keys(media.examples).length === 0) delete media.examples
          }
        }
      }
    }
  }
}

/**
 * Moves each error response that several operations repeat exactly into `components.responses`, named after its
 * codes (`missing_credentials__invalid_access_token`), and refers to it. Run last: it compares finished responses.
 */
export function shareErrorResponses(doc: Node): void {
  const seen = new Map<string, number>()
  const each = (visit: (status: string, response: Node, op: Node) => void) => {
    for (const item of Object.values<Node>(doc.paths ?? {}))
      for (const op of Object.values<Node>(item))
        for (const [status, response] of Object.entries<Node>(op?.responses ?? {}))
          if (!status.startsWith('2') && !response.$ref) visit(status, response, op)
  }
  each((_status, response) => {
    const text = JSON.stringify(response)
    seen.set(text, (seen.get(text) ?? 0) + 1)
  })
  const shared: Node = { ...(doc.components.responses ?? {}) }
  const names = new Map<string, string>()
  each((status, response, op) => {
    const text = JSON.stringify(response)
    if ((seen.get(text) ?? 0) < 2) return
    let name = names.get(text)
    if (!name) {
      const codes = [...String(response.description).matchAll(/`([a-z0-9_]+)`/g)].map((m) => m[1])
      const base = codes.length > 0 ? codes.join('__') : `status_${status}`
      name = base
      for (let n = 2; name in shared; n++) name = `${base}_${n}`
      shared[name] = response
      names.set(text, name)
    }
    op.responses[status] = { $ref: `#/components/responses/${name}` }
  })
  if (Object.keys(shared).length > 0) doc.components.responses = shared
}

export function compactDocument(doc: Node): void {
  doc.components = doc.components ?? {}
  doc.components.headers = { ...SHARED_HEADERS, ...(doc.components.headers ?? {}) }
  doc.components.schemas = withoutValidatorWording(doc.components.schemas)
  for (const item of Object.values<Node>(doc.paths ?? {}))
    for (const op of Object.values<Node>(item)) {
      if (op?.requestBody) op.requestBody = withoutValidatorWording(op.requestBody)
      if (op?.parameters) op.parameters = withoutValidatorWording(op.parameters)
    }
  dropRepeatedExamples(doc)
}
