/** Request and response types drawn from the generated OpenAPI types (`generated/openapi.ts`). */
import type { components, paths } from './generated/openapi.js'

export type { components, paths }
/** Every schema of the OpenAPI document by name: `Schemas['Card']`, `Schemas['Cardholder']`, … */
export type Schemas = components['schemas']

type Operation<P extends keyof paths, M extends string> = M extends keyof paths[P]
  ? paths[P][M]
  : never

/** The JSON body of an operation. */
export type Body<P extends keyof paths, M extends string> =
  Operation<P, M> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never

/** The success answer of an operation (its 200 or 201 JSON). */
export type Answer<P extends keyof paths, M extends string> =
  Operation<P, M> extends { responses: infer R }
    ? R extends { 200: { content: { 'application/json': infer B } } }
      ? B
      : R extends { 201: { content: { 'application/json': infer B } } }
        ? B
        : unknown
    : never

/** The query parameters of a GET, without the cursors the list walks itself. */
export type ListParams<P extends keyof paths> =
  Operation<P, 'get'> extends { parameters: { query?: infer Q } }
    ? Omit<NonNullable<Q>, 'starting_after'> & { starting_after?: string }
    : never

/** The item type of a list operation. */
export type Item<P extends keyof paths> = Answer<P, 'get'> extends { data: (infer I)[] } ? I : never

/** The body type of a POST whose body is optional (lifecycle verbs take `{}`). */
export type Optional<B> = [B] extends [never] ? Record<string, never> : B
