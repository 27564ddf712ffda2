import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { gzipSync } from 'node:zlib'

/** A file the docs pages load from this host, kept in memory with its gzip twin. */
export interface Asset {
  type: string
  body: Buffer
  gzip: Buffer
  etag: string
}

export function makeAsset(content: string | Buffer, type: string): Asset {
  const body = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8')
  return {
    type,
    body,
    gzip: gzipSync(body, { level: 9 }),
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
  }
}

/** Answers an asset: 304 when the caller holds this version, gzip when it accepts it, cacheable for a day. */
export function sendAsset(req: FastifyRequest, reply: FastifyReply, asset: Asset): FastifyReply {
  reply
    .header('ETag', asset.etag)
    .header('Cache-Control', 'public, max-age=86400')
    .header('Vary', 'Accept-Encoding')
    .header('X-Content-Type-Options', 'nosniff')
  const known = String(req.headers['if-none-match'] ?? '')
    .split(',')
    .map((t) => t.trim())
  if (known.includes(asset.etag)) return reply.code(304).send()
  reply.type(asset.type)
  if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? '')))
    return reply.header('Content-Encoding', 'gzip').send(asset.gzip)
  return reply.send(asset.body)
}
