import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler'

/**
 * Fastify's own response serializers (fast-json-stringify), each compiled on the first answer that needs it rather
 * than for every route and status when the server starts, where they were the largest part of the start's time.
 */
export const lazySerializers: SerializerFactory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options)
  return (route) => {
    let serialize: ((data: unknown) => string) | undefined
    return (data) => (serialize ??= compile(route))(data)
  }
}
