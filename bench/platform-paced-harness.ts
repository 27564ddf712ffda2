// An open-loop load generator: requests leave on a fixed schedule (rate per second, evenly spaced) over a
// bounded set of keep-alive connections, and latency counts from the moment a request was due, so a slow
// answer cannot hide the requests queued behind it. autocannon's own `overallRate` sends each second's
// quota in a burst at the start of the second and then idles, which measures bursts, not a steady load.
// It speaks HTTP/1.1 on plain sockets (one request in flight per connection, answers with Content-Length,
// as svc gives them): node's http client costs the shared 2-core machine twice autocannon's CPU per request.
// BENCH_TRACE=file writes each request's due time and latency (ms) there, to see when the slow ones happened.
import { writeFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { measure, type BenchServer, type Figures } from './platform-harness.js'

export interface PacedOptions {
  url: string
  rate: number
  connections: number
  duration: number
  headers?: Record<string, string>
  method?: string
  /** A fresh request body for each request (POST benchmarks). */
  body?: () => string
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0
  return (
    Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] * 10) /
    10
  )
}

const HEAD_END = Buffer.from('\r\n\r\n')

/** One keep-alive connection: sends a request, reads the answer's status line and Content-Length body. */
class Connection {
  private buffered: Buffer = Buffer.alloc(0)
  private pending: ((status: number) => void) | null = null
  readonly socket: Socket

  constructor(host: string, port: number, onError: (err: Error) => void) {
    this.socket = connect({ host, port, noDelay: true })
    this.socket.on('data', (chunk: Buffer) => this.receive(chunk))
    this.socket.on('error', onError)
  }

  send(request: Buffer | string, done: (status: number) => void): void {
    this.pending = done
    this.socket.write(request)
  }

  private receive(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk])
    const headEnd = this.buffered.indexOf(HEAD_END)
    if (headEnd < 0) return
    const head = this.buffered.toString('latin1', 0, headEnd)
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)
    if (!length)
      throw new Error(`paced: an answer without Content-Length: ${head.split('\r\n')[0]}`)
    const end = headEnd + HEAD_END.length + Number(length[1])
    if (this.buffered.length < end) return
    this.buffered = this.buffered.subarray(end)
    const done = this.pending
    this.pending = null
    // An answer nothing asked for is the server closing an idle connection (408 past HEADERS_TIMEOUT_MS).
    if (done) done(Number(head.slice(9, 12)))
  }
}

/** Sends requests to `url` (GET, or `method` with `body()`) at `rate` per second for `duration` seconds; figures as `cannon()` gives them. */
export async function paced(
  name: string,
  options: PacedOptions,
  server?: BenchServer,
): Promise<Figures> {
  return measure(
    name,
    server,
    () =>
      new Promise((resolve, reject) => {
        const target = new URL(options.url)
        const headers = Object.entries({
          host: target.host,
          connection: 'keep-alive',
          ...options.headers,
        })
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('')
        const requestText = (): string => {
          const body = options.body?.() ?? ''
          return `${options.method ?? 'GET'} ${target.pathname}${target.search} HTTP/1.1\r\n${headers}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
        }
        const total = Math.round(options.rate * options.duration)
        const latencies: number[] = []
        const trace: string[] | undefined = process.env.BENCH_TRACE ? [] : undefined
        const idle = Array.from(
          { length: options.connections },
          () => new Connection(target.hostname, Number(target.port || 80), reject),
        )
        const all = [...idle]
        const due: number[] = []
        let failures = 0
        let sent = 0
        let settled = 0
        const start = performance.now()

        const finish = () => {
          clearInterval(timer)
          for (const c of all) c.socket.destroy()
          if (trace)
            writeFileSync(
              process.env.BENCH_TRACE!,
              `# start ${Date.now() - (performance.now() - start)}\n${trace.join('\n')}\n`,
            )
          latencies.sort((a, b) => a - b)
          resolve({
            requests: latencies.length,
            durationSeconds: (performance.now() - start) / 1000,
            p50: percentile(latencies, 50),
            p90: percentile(latencies, 90),
            p99: percentile(latencies, 99),
            max: percentile(latencies, 100),
            failures,
            latencies,
          })
        }
        // A free connection takes the oldest request that is due; latency counts from when it was due.
        const dispatch = () => {
          while (idle.length > 0 && due.length > 0) {
            // Oldest idle first, so every connection keeps working and none sits idle past the server's header timeout.
            const connection = idle.shift()!
            const dueAt = due.shift()!
            connection.send(requestText(), (status) => {
              const latency = performance.now() - dueAt
              if (status >= 200 && status < 300) {
                latencies.push(latency)
                trace?.push(`${Math.round(dueAt - start)} ${latency.toFixed(1)}`)
              } else failures++
              idle.push(connection)
              if (++settled === total) finish()
              else dispatch()
            })
          }
        }
        // Every millisecond, queue what the schedule says is due by now.
        const timer = setInterval(() => {
          const now = performance.now()
          while (sent < total && start + (sent * 1000) / options.rate <= now) {
            due.push(start + (sent * 1000) / options.rate)
            sent++
          }
          dispatch()
        }, 1)
      }),
  )
}
