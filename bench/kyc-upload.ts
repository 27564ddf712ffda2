// `npm run bench -- kyc-upload`: the largest request the API takes, 3 × 20 MiB KYC documents in one
// JSON body (~80 MiB), sent to a real `svc serve` process; reports the server's peak RSS during the upload.
// Runs against the embedded PGlite default and against PostgreSQL (BENCH_DATABASE_URL, default local).
// `-- --concurrent 32`: 32 such uploads at once, for the per-process upload cap (peak and settled RSS).
import { createHash, randomBytes } from 'node:crypto'
import { readdirSync, readFileSync, writeFileSync, mkdtempSync, mkdirSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { accessToken, createTenant, startServer, type BenchServer } from './platform-harness.js'

const MiB = 1024 * 1024
const DOC_BYTES = 20 * MiB
const DOCS = 3
const CHUNK = 3 * 64 * 1024 // a multiple of 3: each chunk's base64 has no padding but the last

/** The server's process id, found by the BASE_URL it was started with (the harness does not expose it). */
function serverPid(server: BenchServer): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0')
      if (
        environ.includes(`BASE_URL=${server.baseUrl}`) &&
        readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('svc.js')
      )
        return Number(entry)
    } catch {
      /* process gone or not ours */
    }
  }
  throw new Error(`no svc process found for ${server.baseUrl}`)
}

function memoryKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`))
  return Number(line?.replace(/\D+/g, '') ?? 0)
}

/** Resets the kernel's peak-RSS mark (VmHWM); falls back to sampling when not permitted. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

interface Part {
  text?: string
  file?: number
}

/** The attestation body as parts: JSON text around three files, each streamed as base64 while hashing it. */
function bodyParts(verifiedAt: string): Part[] {
  const parts: Part[] = [
    {
      text: `${JSON.stringify({ status: 'approved', provider: 'bench', verified_at: verifiedAt, method: 'document' }).slice(0, -1)},"documents":[`,
    },
  ]
  for (let i = 0; i < DOCS; i++) {
    parts.push({
      text: `${i ? ',' : ''}{"kind":"passport","file_name":"doc-${i}.pdf","content_type":"application/pdf","content":"`,
    })
    parts.push({ file: i })
    parts.push({ text: '"}' })
  }
  parts.push({ text: ']}' })
  return parts
}

function contentLength(parts: Part[]): number {
  return parts.reduce(
    (n, p) => n + (p.text !== undefined ? Buffer.byteLength(p.text) : 4 * Math.ceil(DOC_BYTES / 3)),
    0,
  )
}

interface Upload {
  status: number
  ms: number
  peakMb: number
  baselineMb: number
  sha256ok: boolean
}

async function upload(
  server: BenchServer,
  token: string,
  cardholderId: string,
  pid: number,
  headers: Record<string, string> = {},
): Promise<Upload> {
  const parts = bodyParts(new Date(Date.now() - 60_000).toISOString())
  const hashes: string[] = []
  const baselineKb = memoryKb(pid, 'VmRSS')
  const kernelPeak = resetPeak(pid)
  let sampledPeakKb = baselineKb
  const sampler = setInterval(() => {
    sampledPeakKb = Math.max(sampledPeakKb, memoryKb(pid, 'VmRSS'))
  }, 5)
  const started = Date.now()
  const { status, text } = await new Promise<{ status: number; text: string }>(
    (resolve, reject) => {
      const req = request(
        `${server.baseUrl}/v1/cardholders/${cardholderId}/kyc`,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'content-length': String(contentLength(parts)),
            ...headers,
          },
        },
        (res) => {
          let body = ''
          res
            .setEncoding('utf8')
            .on('data', (c) => {
              body += c
            })
            .on('end', () => resolve({ status: res.statusCode ?? 0, text: body }))
        },
      )
      req.on('error', reject)
      void (async () => {
        for (const part of parts) {
          if (part.text !== undefined) {
            req.write(part.text)
            continue
          }
          const hash = createHash('sha256')
          for (let sent = 0; sent < DOC_BYTES; sent += CHUNK) {
            const chunk = randomBytes(Math.min(CHUNK, DOC_BYTES - sent))
            hash.update(chunk)
            if (!req.write(chunk.toString('base64'))) await new Promise((r) => req.once('drain', r))
          }
          hashes.push(hash.digest('hex'))
        }
        req.end()
      })().catch(reject)
    },
  )
  const ms = Date.now() - started
  clearInterval(sampler)
  sampledPeakKb = Math.max(sampledPeakKb, memoryKb(pid, 'VmRSS'))
  const peakKb = kernelPeak ? Math.max(memoryKb(pid, 'VmHWM'), sampledPeakKb) : sampledPeakKb
  let sha256ok = false
  if (status === 201) {
    const docs = (JSON.parse(text) as { documents: { sha256: string; size_bytes: number }[] })
      .documents
    sha256ok =
      docs.length === DOCS &&
      docs.every((d, i) => d.sha256 === hashes[i] && d.size_bytes === DOC_BYTES)
  } else {
    process.stderr.write(`upload answered ${status}: ${text.slice(0, 300)}\n`)
  }
  return {
    status,
    ms,
    peakMb: Math.round(peakKb / 1024),
    baselineMb: Math.round(baselineKb / 1024),
    sha256ok,
  }
}

async function runMode(mode: 'pglite' | 'postgres', runs: number): Promise<string[]> {
  const env: Record<string, string> =
    mode === 'pglite'
      ? { DATABASE_URL: '', DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-kyc-bench-')) }
      : {}
  if (mode === 'pglite') mkdirSync(env.DATA_DIR, { recursive: true })
  const server = await startServer(env)
  const rows: string[] = []
  try {
    const pid = serverPid(server)
    const client = await createTenant(server)
    const token = await accessToken(client)
    for (let run = 1; run <= runs; run++) {
      const res = await fetch(`${server.baseUrl}/v1/cardholders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          type: 'individual',
          first_name: 'Bench',
          last_name: `Run ${run}`,
          email: `bench-${run}-${randomBytes(4).toString('hex')}@example.com`,
        }),
      })
      const cardholder = (await res.json()) as { id: string }
      const withKey = run === runs && runs > 1
      const r = await upload(
        server,
        token,
        cardholder.id,
        pid,
        withKey ? { 'idempotency-key': `bench-${randomBytes(6).toString('hex')}` } : {},
      )
      const label = `${mode}, upload ${run}${withKey ? ' (with Idempotency-Key)' : ''}`
      rows.push(
        `| ${label} | ${r.status} | ${r.sha256ok ? 'yes' : 'NO'} | ${r.ms} | ${r.baselineMb} | ${r.peakMb} | ${r.peakMb - r.baselineMb} |`,
      )
      process.stdout.write(`${rows.at(-1)}\n`)
    }
  } finally {
    await server.stop()
  }
  return rows
}

/**
 * `--concurrent N`: N uploads sent at the same moment, each to its own cardholder, the same 20 MiB document three
 * times (so the client's own cost stays small). An upload answered `429` waits for its Retry-After (plus jitter)
 * and is sent again, as a client should. Reports the answers, the server's peak RSS during the burst and its
 * RSS once the burst is over (2 s and 10 s later).
 */
async function concurrentMode(mode: 'pglite' | 'postgres', n: number): Promise<string> {
  const env: Record<string, string> =
    mode === 'pglite'
      ? { DATABASE_URL: '', DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-kyc-bench-')) }
      : {}
  const server = await startServer(env)
  try {
    const pid = serverPid(server)
    const client = await createTenant(server)
    const token = await accessToken(client)
    const holders: string[] = []
    for (let i = 0; i < n; i++) {
      const res = await fetch(`${server.baseUrl}/v1/cardholders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          type: 'individual',
          first_name: 'Bench',
          last_name: `Concurrent ${i}`,
          email: `bench-c${i}-${randomBytes(4).toString('hex')}@example.com`,
        }),
      })
      holders.push(((await res.json()) as { id: string }).id)
    }
    const doc = randomBytes(DOC_BYTES)
    const sha = createHash('sha256').update(doc).digest('hex')
    const b64 = Buffer.from(doc.toString('base64'))
    const head = (i: number) =>
      `${i ? ',' : ''}{"kind":"passport","file_name":"doc-${i}.pdf","content_type":"application/pdf","content":"`
    const prefix = `${JSON.stringify({ status: 'approved', provider: 'bench', verified_at: new Date(Date.now() - 60_000).toISOString(), method: 'document' }).slice(0, -1)},"documents":[`
    const length =
      Buffer.byteLength(prefix) +
      [0, 1, 2].reduce((sum, i) => sum + Buffer.byteLength(head(i)) + b64.length + 2, 0) +
      2

    const send = (cardholderId: string) =>
      new Promise<{ status: number; retryAfter: number; text: string }>((resolve, reject) => {
        const req = request(
          `${server.baseUrl}/v1/cardholders/${cardholderId}/kyc`,
          {
            method: 'POST',
            headers: {
              authorization: `Bearer ${token}`,
              'content-type': 'application/json',
              'content-length': String(length),
            },
          },
          (res) => {
            let text = ''
            res
              .setEncoding('utf8')
              .on('data', (c) => {
                text += c
              })
              .on('end', () =>
                resolve({
                  status: res.statusCode ?? 0,
                  retryAfter: Number(res.headers['retry-after'] ?? 1),
                  text,
                }),
              )
          },
        )
        let answered = false
        req.on('response', () => {
          answered = true
        })
        req.on('error', (err) => (answered ? undefined : reject(err)))
        void (async () => {
          const write = async (chunk: string | Buffer) => {
            if (answered || req.destroyed) return
            if (req.write(chunk)) return
            await new Promise<void>((resolve) => {
              const done = () => {
                req.off('drain', done)
                req.off('close', done)
                resolve()
              }
              req.on('drain', done).on('close', done)
            })
          }
          await write(prefix)
          for (let d = 0; d < DOCS; d++) {
            await write(head(d))
            for (let at = 0; at < b64.length; at += 256 * 1024)
              await write(b64.subarray(at, at + 256 * 1024))
            await write('"}')
          }
          await write(']}')
          if (!req.destroyed) req.end()
        })().catch(reject)
      })

    const baselineMb = Math.round(memoryKb(pid, 'VmRSS') / 1024)
    let peakKb = 0
    const sampler = setInterval(() => {
      peakKb = Math.max(peakKb, memoryKb(pid, 'VmRSS'))
    }, 10)
    const started = Date.now()
    let refusals = 0
    const outcomes = await Promise.all(
      holders.map(async (id) => {
        for (;;) {
          const r = await send(id)
          if (r.status !== 429) {
            const docs =
              r.status === 201
                ? (JSON.parse(r.text) as { documents: { sha256: string }[] }).documents
                : []
            if (r.status !== 201)
              process.stderr.write(`upload answered ${r.status}: ${r.text.slice(0, 300)}\n`)
            return r.status === 201 && docs.length === DOCS && docs.every((d) => d.sha256 === sha)
          }
          refusals++
          await new Promise((done) => setTimeout(done, r.retryAfter * 1000 + Math.random() * 500))
        }
      }),
    )
    const ms = Date.now() - started
    clearInterval(sampler)
    peakKb = Math.max(peakKb, memoryKb(pid, 'VmRSS'))
    await new Promise((r) => setTimeout(r, 2000))
    const after2 = Math.round(memoryKb(pid, 'VmRSS') / 1024)
    await new Promise((r) => setTimeout(r, 8000))
    const after10 = Math.round(memoryKb(pid, 'VmRSS') / 1024)
    const stored = outcomes.filter(Boolean).length
    return `| ${mode}, ${n} at once | ${stored}/${n} | ${refusals} | ${ms} | ${baselineMb} | ${Math.round(peakKb / 1024)} | ${after2} | ${after10} |`
  } finally {
    await server.stop()
  }
}

const args = process.argv.slice(2)
const runs = Number(args[args.indexOf('--runs') + 1]) || 3
const concurrent = args.includes('--concurrent')
  ? Number(args[args.indexOf('--concurrent') + 1]) || 32
  : 0
const modes = args.includes('--postgres-only')
  ? (['postgres'] as const)
  : args.includes('--pglite-only')
    ? (['pglite'] as const)
    : (['pglite', 'postgres'] as const)
process.stdout.write(
  `KYC upload: ${DOCS} × ${DOC_BYTES / MiB} MiB documents, ${(contentLength(bodyParts(new Date().toISOString())) / MiB).toFixed(1)} MiB JSON body\n`,
)
if (concurrent > 0) {
  process.stdout.write(
    '| run | stored (sha256 match) | 429 answers (retried) | ms | server RSS before (MB) | server peak RSS (MB) | RSS 2 s after (MB) | RSS 10 s after (MB) |\n|---|---:|---:|---:|---:|---:|---:|---:|\n',
  )
  for (const mode of modes) process.stdout.write(`${await concurrentMode(mode, concurrent)}\n`)
} else {
  process.stdout.write(
    '| run | status | sha256 match | ms | server RSS before (MB) | server peak RSS (MB) | peak − before (MB) |\n|---|---:|---|---:|---:|---:|---:|\n',
  )
  for (const mode of modes) await runMode(mode, runs)
}
