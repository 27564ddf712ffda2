import { createHash } from 'node:crypto'
import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { preferredEncoding } from '../../http/encoding.js'

/** A file the docs pages serve, kept in memory with its brotli and gzip twins (compressed once per process). */
export interface Asset {
  type: string
  body: Buffer
  br: Buffer
  gzip: Buffer
  etag: string
  /** The address it is linked at: its path with `?v=` and its hash, so it may be cached for a year. */
  href: string
}

const brotli = promisify(brotliCompress)
const gzipAsync = promisify(gzip)

/** Builds the asset; the compression runs in libuv's thread pool, off the event loop. */
export async function makeAsset(
  path: string,
  content: string | Buffer,
  type: string,
): Promise<Asset> {
  const body = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8')
  const [br, gz] = await Promise.all([
    brotli(body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 9,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    }),
    gzipAsync(body, { level: 9 }),
  ])
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 27)
  return { type, body, br, gzip: gz, etag: `"${hash}"`, href: `${path}?v=${hash.slice(0, 12)}` }
}

const CACHE_CONTROL = {
  immutable: 'public, max-age=31536000, immutable',
  day: 'public, max-age=86400',
  revalidate: 'no-cache',
} as const

/** Whether the caller already holds this version (`If-None-Match`). */
export function holds(req: FastifyRequest, etag: string): boolean {
  return String(req.headers['if-none-match'] ?? '')
    .split(',')
    .map((t) => t.trim())
    .includes(etag)
}

/**
 * Answers an asset: 304 when the caller holds this version, brotli or gzip as `Accept-Encoding` prefers.
 * `cache`: `immutable` for a file asked at its hashed address (a year), `day` for one asked without it (the other
 * docs pages link `/docs/assets/docs.css` as it is), `revalidate` for a page (`no-cache`: the browser asks each time
 * and gets a 304 while it is unchanged).
 */
export function sendAsset(
  req: FastifyRequest,
  reply: FastifyReply,
  asset: Asset,
  cache: 'immutable' | 'day' | 'revalidate',
): FastifyReply {
  reply
    .header('ETag', asset.etag)
    .header('Cache-Control', CACHE_CONTROL[cache])
    .header('Vary', 'Accept-Encoding')
    .header('X-Content-Type-Options', 'nosniff')
  if (holds(req, asset.etag)) return reply.code(304).send()
  reply.type(asset.type)
  const encoding = preferredEncoding(req.headers['accept-encoding'])
  if (encoding === 'br') return reply.header('Content-Encoding', 'br').send(asset.br)
  if (encoding === 'gzip') return reply.header('Content-Encoding', 'gzip').send(asset.gzip)
  return reply.send(asset.body)
}
