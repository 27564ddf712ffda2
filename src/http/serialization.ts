import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler'

/**
 * Fastify's own response serializers (fast-json-stringify), each compiled on the first answer that needs it rather
 * than for every route and status when the server starts (with the request validators, a fifth of the start).
 */
export const lazySerializers: SerializerFactory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options)
  return (route) => {
    let serialize: ((data: unknown) => string) | undefined
    return (data) => (serialize ??= compile(route))(data)
  }
}
