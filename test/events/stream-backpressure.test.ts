import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { after, before, test } from 'node:test'
import { withTx } from '../../src/db/tx.js'
import { emit } from '../../src/modules/events/index.js'
import { STREAM_BATCH } from '../../src/modules/events/stream-session.js'
import {
  createTenant,
  listenOnPort,
  startTestApp,
  type TestApp,
  type TestClient,
} from '../helpers/app.js'
import { events, openStream, parseMessage, type Opened } from './sse-client.js'

// The attack: ten readers that opened the stream and never read made the server hold every event for them (+77 MiB).
// Now a stream stops reading while its connection is full and is cut off once more than EVENT_STREAM_MAX_BEHIND events
// wait for it; the reader resumes with Last-Event-ID and misses nothing. Real sockets on a real port: each stalled
// reader sends its request and never reads a byte until it is cut off.

const READERS = 10
const EVENTS = 3_000
const MAX_BEHIND = 500
const PAYLOAD = 'x'.repeat(2_000)
/**
 * What the server may hold for all ten in its own buffers (their connections' write queues): each a socket's buffer
 * and the one batch it had read when the connection filled (an event here is about 2.2 KB on the wire).
 */
const HELD_LIMIT = READERS * (64 * 1024 + STREAM_BATCH * 2_300)

let t: TestApp
let baseUrl: string
let tenant: TestClient
let token: string
const serverSockets = new Set<Socket>()
const opened: Opened[] = []

before(async () => {
  t = await startTestApp({
    env: {
      EVENT_STREAM_POLL_MS: '50',
      EVENT_STREAM_LIFETIME_MS: '600000',
      EVENT_STREAM_HEARTBEAT_MS: '60000',
      EVENT_STREAM_MAX_BEHIND: String(MAX_BEHIND),
      EVENT_STREAM_MAX_PER_ENVIRONMENT: String(READERS + 2),
    },
  })
  baseUrl = await listenOnPort(t)
  t.app.server.on('connection', (s: Socket) => {
    serverSockets.add(s)
    s.on('close', () => serverSockets.delete(s))
  })
  tenant = await createTenant(t)
  token = await tenant.token()
})
after(async () => {
  for (const s of opened) s.close()
  await t.close()
})

interface Stalled {
  socket: Socket
  received: Buffer[]
  closed: Promise<void>
}

/** Opens the stream on a raw socket that reads nothing (paused before the first byte arrives) until told to. */
async function stalledReader(): Promise<Stalled> {
  const url = new URL(baseUrl)
  const socket = connect(Number(url.port), url.hostname)
  socket.pause()
  const received: Buffer[] = []
  socket.on('data', (c: Buffer) => received.push(c))
  const closed = new Promise<void>((resolve) =>
    socket.on('close', () => resolve()).on('error', () => {}),
  )
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
  socket.write(
    `GET /v1/events/stream HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\n` +
      'Accept: text/event-stream\r\n\r\n',
  )
  return { socket, received, closed }
}

/** The bytes the server holds in its own write queues for these client sockets (matched by port). */
function heldFor(readers: Stalled[]): number {
  const ports = new Set(readers.map((r) => r.socket.localPort))
  let held = 0
  for (const s of serverSockets) if (ports.has(s.remotePort!)) held += s.writableLength
  return held
}

/** The body of a chunked HTTP/1.1 response as far as it arrived (the last chunk may be cut short). */
function chunkedBody(raw: Buffer): string {
  let at = raw.indexOf('\r\n\r\n') + 4
  const parts: Buffer[] = []
  while (at < raw.length) {
    const eol = raw.indexOf('\r\n', at)
    if (eol < 0) break
    const size = parseInt(raw.subarray(at, eol).toString('latin1'), 16)
    if (!size) break
    parts.push(raw.subarray(eol + 2, Math.min(raw.length, eol + 2 + size)))
    at = eol + 2 + size + 2
  }
  return Buffer.concat(parts).toString('utf8')
}

/** `count` events of about 2 KB each, 100 to a transaction; answers their ids, oldest first. */
async function emitMany(count: number): Promise<string[]> {
  const ids: string[] = []
  const scope = { organizationId: tenant.organizationId, environment: tenant.environment }
  for (let done = 0; done < count; done += 100) {
    await withTx(t.deps.db, async (trx) => {
      for (let i = done; i < Math.min(count, done + 100); i++) {
        const object = { id: `card_${i}`, object: 'card', note: PAYLOAD }
        ids.push(await emit(trx, scope, 'card.frozen', object, t.clock.now()))
      }
    })
  }
  return ids
}

test('ten readers that never read: the server holds a bounded buffer for each, cuts them off, and each resumes by Last-Event-ID without loss', {
  timeout: 120_000,
}, async (ctx) => {
  const readers: Stalled[] = []
  for (let i = 0; i < READERS; i++) readers.push(await stalledReader())
  await new Promise((r) => setTimeout(r, 300))
  const baseline = process.memoryUsage()
  let peak = 0
  const sampler = setInterval(() => {
    peak = Math.max(peak, heldFor(readers))
  }, 20)
  const ids = await emitMany(EVENTS)
  // Long enough for every stream to have read every event, had it kept reading.
  const until = Date.now() + 10_000
  const connected = () =>
    [...serverSockets].filter((s) => readers.some((r) => r.socket.localPort === s.remotePort))
  while (Date.now() < until && connected().length > 0) await new Promise((r) => setTimeout(r, 50))
  clearInterval(sampler)
  peak = Math.max(peak, heldFor(readers))
  const grown = process.memoryUsage()
  const grewMiB =
    (grown.heapUsed + grown.external - baseline.heapUsed - baseline.external) / 1048576
  ctx.diagnostic(
    `held for ${READERS} stalled readers at most ${(peak / 1024).toFixed(0)} KiB in the server's write ` +
      `queues; heap + external grew ${grewMiB.toFixed(1)} MiB (${EVENTS} events of about 2 KB)`,
  )
  assert.ok(
    peak <= HELD_LIMIT,
    `the server held ${peak} bytes for ${READERS} readers that do not read`,
  )

  // Every stalled reader was cut off: the server closed its connection (the client sees the end once it reads).
  assert.equal(connected().length, 0, `${connected().length} stalled readers still connected`)

  // Each reader reads what reached it, then resumes after the last complete event it got: nothing is missed.
  for (const reader of readers) {
    reader.socket.resume()
    await reader.closed
    // Complete messages only (each ends with a blank line): a cut one is not an event, as for any SSE client.
    const got = chunkedBody(Buffer.concat(reader.received))
      .split('\n\n')
      .slice(0, -1)
      .map(parseMessage)
    const delivered = got.filter((m) => m.data).map((m) => m.id!)
    assert.ok(delivered.length < EVENTS, 'a stalled reader was sent every event')
    assert.deepEqual(
      delivered,
      ids.slice(0, delivered.length),
      'the stalled reader got the oldest events, in order',
    )
    const last = [...got].reverse().find((m) => m.id)!.id!
    const resumed = await openStream(baseUrl, token, '', { 'last-event-id': last })
    opened.push(resumed)
    await resumed.waitFor((m) => events(m).some((x) => x.id === ids[ids.length - 1]), 30_000)
    resumed.close()
    const after = events(resumed.messages).map((m) => m.id!)
    assert.deepEqual(
      [...delivered.filter((id) => id <= last), ...after],
      ids,
      'the resumed reader missed events',
    )
  }
})
