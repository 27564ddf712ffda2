import { Transform, type Readable, type TransformCallback } from 'node:stream'
import { ApiError } from '../../http/errors.js'

/**
 * The slowest a KYC upload's body may arrive once it holds a slot: 64 KiB/s (512 kbit/s), measured over each
 * window of 5 s. A body that brings less in a window is cut off there with `408 request_timeout` and its slot is
 * free again, instead of holding it for the whole 30 s the request may take. The largest upload (85 MiB) needs
 * about 2.9 MB/s to arrive within those 30 s anyway: the floor only stops bodies that trickle or stall.
 */
export const KYC_UPLOAD_MIN_BYTES_PER_SECOND = 64 * 1024
export const KYC_UPLOAD_PACE_WINDOW_MS = 5_000

export interface UploadPace {
  minBytesPerSecond: number
  windowMs: number
}

const DEFAULT_PACE: UploadPace = {
  minBytesPerSecond: KYC_UPLOAD_MIN_BYTES_PER_SECOND,
  windowMs: KYC_UPLOAD_PACE_WINDOW_MS,
}

/** Counts the bytes passed on; `receivedEncodedLength` is what Fastify compares with the body limit and Content-Length. */
class CountingStream extends Transform {
  receivedEncodedLength = 0

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.receivedEncodedLength += chunk.length
    callback(null, chunk)
  }
}

function tooSlow(received: number, pace: UploadPace): ApiError {
  const perSecond = `${pace.minBytesPerSecond / 1024} KiB/s`
  return new ApiError('request_timeout', {
    message:
      `The upload's body arrived slower than ${perSecond} (${received} bytes in the last ${pace.windowMs / 1000} s); ` +
      'the connection is closed. Send the upload again without pausing.',
    headers: { Connection: 'close' },
  })
}

/**
 * The request body as Fastify should read it (a `preParsing` stream): the same bytes, and an error in place of the
 * rest when a window passes with fewer than `minBytesPerSecond × windowMs` bytes. The source is left unread then;
 * the answer closes the connection.
 */
export function pacedBody(source: Readable, pace: UploadPace = DEFAULT_PACE): Readable {
  const out = new CountingStream()
  const minPerWindow = (pace.minBytesPerSecond * pace.windowMs) / 1000
  let windowStart = 0
  const timer = setInterval(() => {
    const received = out.receivedEncodedLength - windowStart
    windowStart = out.receivedEncodedLength
    if (received >= minPerWindow) return
    clearInterval(timer)
    source.unpipe(out)
    out.destroy(tooSlow(received, pace))
  }, pace.windowMs)
  timer.unref()
  const stop = () => clearInterval(timer)
  out.once('end', stop)
  out.once('close', stop)
  // A client that goes away mid-body: the parser is told instead of waiting for bytes that never come.
  source.once('close', () => {
    if (!(source as Readable & { complete?: boolean }).complete && !out.destroyed)
      out.destroy(new Error('the client closed the connection'))
  })
  source.pipe(out)
  return out
}
