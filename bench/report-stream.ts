// `npm run bench -- report-stream`: a ledger report over the last 90 days of the scale benchmark's large
// organization (millions of rows; seed it first with `npm run bench -- scale`, `--size` must match), generated and
// downloaded with memory that does not grow with the rows. The report is requested through the API; this process
// generates it with the service's own code (`generateReport`, what the report job runs), sampling its resident
// memory every 20 ms; then the CSV is downloaded through HTTP from a real `svc serve` while the server's memory
// (every HTTP process) is sampled the same way. The figures: rows, bytes, parts, seconds, and the peak RSS of each
// side above what it held before.
//
//   npm run bench -- report-stream [--size 1] [--days 90]
import { randomBytes } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { loadConfig } from '../src/config.js'
import { generateReport } from '../src/modules/reports/generate.js'
import { openRuntime } from '../src/runtime.js'
import { accessToken, startServer } from './platform-harness.js'
import { largeDatabase, readSeedState } from './scale-seed-harness.js'

const { values } = parseArgs({
  options: { size: { type: 'string', default: '1' }, days: { type: 'string', default: '90' } },
})
const days = Number(values.days)
const log = (line: string) => process.stdout.write(`${line}\n`)
const MB = 1024 * 1024

const { name, url } = largeDatabase(Number(values.size))
const state = await readSeedState(url)
if (!state)
  throw new Error(
    `${name} is not seeded: run \`npm run bench -- scale --size ${values.size}\` first`,
  )

/** Resident memory of a process in bytes (VmRSS), null once it is gone. */
function rssOf(pid: number): number | null {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
    return kb ? Number(kb) * 1024 : null
  } catch {
    return null
  }
}

/** The server and the HTTP processes it forked. */
function treePids(root: number): number[] {
  const pids = [root]
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1]) === root)
        pids.push(Number(entry))
    } catch {
      /* gone */
    }
  }
  return pids
}

/** Samples `read()` every 20 ms until `stop()`; answers the highest value seen. */
function sampler(read: () => number): { stop: () => number } {
  let peak = read()
  const timer = setInterval(() => {
    peak = Math.max(peak, read())
  }, 20)
  return {
    stop: () => {
      clearInterval(timer)
      return Math.max(peak, read())
    },
  }
}

const server = await startServer(
  {
    HTTP_PROCESSES: String(cpus().length),
    DATABASE_CONNECTIONS: String(3 * cpus().length),
    SVC_DISABLE_WORKER: 'true',
  },
  { database: name },
)
state.client.tokenUrl = `${server.baseUrl}/oauth/token`
let figures: Record<string, unknown> = {}
try {
  const token = await accessToken(state.client)
  const to = new Date()
  const from = new Date(to.getTime() - days * 24 * 3600 * 1000)
  const res = await fetch(`${server.baseUrl}/v1/reports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'ledger', from: from.toISOString(), to: to.toISOString() }),
  })
  const report = (await res.json()) as { id: string }
  if (res.status !== 201 && res.status !== 200)
    throw new Error(`POST /v1/reports → ${res.status} ${JSON.stringify(report)}`)

  const config = loadConfig({
    DATABASE_URL: url,
    BASE_URL: server.baseUrl,
    SVC_MASTER_KEY: randomBytes(32).toString('base64'),
    SVC_DISABLE_WORKER: 'true',
    LOG_LEVEL: 'warn',
    DATABASE_CONNECTIONS: '2',
    SVC_OPERATOR_TOKEN: randomBytes(16).toString('hex'),
  })
  const { deps, handle } = await openRuntime(config)
  let generated
  let generation: { rssBefore: number; rssPeak: number; seconds: number }
  try {
    global.gc?.()
    const rssBefore = process.memoryUsage().rss
    const watch = sampler(() => process.memoryUsage().rss)
    const started = performance.now()
    generated = await generateReport(deps, report.id)
    generation = { rssBefore, rssPeak: watch.stop(), seconds: (performance.now() - started) / 1000 }
  } finally {
    await handle.close()
  }
  log(
    `  generated ${generated.rows.toLocaleString('en-US')} rows, ${(generated.sizeBytes / MB).toFixed(0)} MiB in ${generated.parts} parts, ${generation.seconds.toFixed(1)} s; ` +
      `RSS ${(generation.rssBefore / MB).toFixed(0)} → peak ${(generation.rssPeak / MB).toFixed(0)} MiB; at most ${(generated.maxBufferedBytes / MB).toFixed(2)} MiB of CSV held`,
  )

  const pids = treePids(server.pid)
  const serverRss = () => pids.reduce((sum, pid) => sum + (rssOf(pid) ?? 0), 0)
  const serverBefore = serverRss()
  const watch = sampler(serverRss)
  const started = performance.now()
  const download = await fetch(`${server.baseUrl}/v1/reports/${report.id}/download`, {
    headers: { authorization: `Bearer ${token}` },
  })
  let bytes = 0
  let lines = 0
  for await (const chunk of download.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length
    for (const b of chunk) if (b === 10) lines++
  }
  const downloadSeconds = (performance.now() - started) / 1000
  const serverPeak = watch.stop()
  log(
    `  downloaded ${(bytes / MB).toFixed(0)} MiB (${lines.toLocaleString('en-US')} lines, content-length ${download.headers.get('content-length')}) in ${downloadSeconds.toFixed(1)} s; ` +
      `server RSS (all processes) ${(serverBefore / MB).toFixed(0)} → peak ${(serverPeak / MB).toFixed(0)} MiB`,
  )
  if (bytes !== generated.sizeBytes || lines !== generated.rows + 1)
    throw new Error(`download differs from the generated file: ${bytes} bytes, ${lines} lines`)
  figures = {
    days,
    rows: generated.rows,
    bytes,
    parts: generated.parts,
    maxBufferedBytes: generated.maxBufferedBytes,
    generation,
    download: {
      seconds: downloadSeconds,
      serverRssBefore: serverBefore,
      serverRssPeak: serverPeak,
    },
  }
} finally {
  await server.stop()
}
log(
  [
    '',
    `svc report streaming — ${new Date().toISOString()}`,
    `node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, PostgreSQL database ${name}, load average ${loadavg()[0].toFixed(1)}`,
  ].join('\n'),
)
const dir = join(fileURLToPath(new URL('.', import.meta.url)), 'results')
mkdirSync(dir, { recursive: true })
writeFileSync(join(dir, `report-stream-${Date.now()}.json`), JSON.stringify(figures, null, 2))
