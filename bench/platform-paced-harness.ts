// An open-loop load generator: requests leave on a fixed schedule (rate per second, evenly spaced) over a
// bounded set of keep-alive connections, and latency counts from the moment a request was due, so a slow
// answer cannot hide the requests queued behind it. autocannon's own `overallRate` sends each second's
// quota in a burst at the start of the second and then idles, which measures bursts, not a steady load.
import { Agent, request } from 'node:http'
import { measure, type BenchServer, type Figures } from './platform-harness.js'

export interface PacedOptions {
  url: string
  rate: number
  connections: number
  duration: number
  headers?: Record<string, string>
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] * 10) / 10
}

/** GETs `url` at `rate` requests per second for `duration` seconds; figures as `cannon()` gives them. */
export async function paced(name: string, options: PacedOptions, server?: BenchServer): Promise<Figures> {
  return measure(name, server, () => new Promise((resolve) => {
    const agent = new Agent({ keepAlive: true, maxSockets: options.connections })
    const target = new URL(options.url)
    const total = Math.round(options.rate * options.duration)
    const latencies: number[] = []
    let failures = 0
    let sent = 0
    let settled = 0
    const start = performance.now()

    const finish = () => {
      clearInterval(timer)
      agent.destroy()
      latencies.sort((a, b) => a - b)
      resolve({
        requests: latencies.length,
        durationSeconds: (performance.now() - start) / 1000,
        p50: percentile(latencies, 50), p90: percentile(latencies, 90), p99: percentile(latencies, 99),
        max: percentile(latencies, 100),
        failures,
      })
    }
    const fire = (due: number) => {
      const req = request(target, { agent, headers: options.headers }, (res) => {
        res.resume()
        res.on('end', () => {
          if (res.statusCode === 200) latencies.push(performance.now() - due)
          else failures++
          if (++settled === total) finish()
        })
      })
      req.on('error', () => { failures++; if (++settled === total) finish() })
      req.end()
    }
    // Every millisecond, send what the schedule says is due by now (the agent queues what finds no free connection).
    const timer = setInterval(() => {
      const now = performance.now()
      while (sent < total && start + (sent * 1000) / options.rate <= now) {
        fire(start + (sent * 1000) / options.rate)
        sent++
      }
    }, 1)
  }))
}
