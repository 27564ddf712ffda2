import type { FastifyInstance } from 'fastify'
import cluster from 'node:cluster'
import { existsSync, readFileSync } from 'node:fs'
import type { Server } from 'node:http'
import { createServer, type AddressInfo } from 'node:net'
import { join, resolve } from 'node:path'
import { buildApp } from './app.js'
import type { Config } from './config.js'
import { serveMetrics } from './http/metrics.js'
import { startWorker, type WorkerHandle } from './jobs/worker.js'
import { openRuntime } from './runtime.js'
import type { DemoSignIn } from './modules/users/index.js'
import { sandboxClientPath, seedDemo, type SandboxClientFile } from './seed/demo.js'

/** Where the operator token comes from: the generated file of the embedded default, or the variable. */
function operatorTokenSource(config: Config): string {
  const file = join(config.dataDir, 'operator-token')
  const fromFile = existsSync(file) && readFileSync(file, 'utf8').trim() === config.operatorToken
  return fromFile ? file : 'the SVC_OPERATOR_TOKEN variable'
}

/** The banner's console lines: the demo owner's one-time link while they have no password, then the sign-in page. */
function consoleLines(signIn: DemoSignIn): string[] {
  if (signIn.kind === 'sign_in') return [`  console: ${signIn.url} (demo owner ${signIn.email})`]
  return [
    `  console: set the password of the demo owner ${signIn.email} with this one-time link (valid 72 hours;`,
    '  a new one is printed at each start until the password is set):',
    `    ${signIn.url}`,
  ]
}

/**
 * Where a server listens, as it truly does: Fastify's own answer names 127.0.0.1 when it listens on every
 * interface, which would hide that the port is open to the network.
 */
export function listeningAddress(address: Pick<AddressInfo, 'address' | 'port'>): string {
  if (address.address === '0.0.0.0' || address.address === '::')
    return `http://${address.address === '::' ? '[::]' : '0.0.0.0'}:${address.port} (every interface)`
  return `http://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`
}

function metricsLine(config: Config): string {
  return config.metricsPort === null
    ? '  metrics: /metrics with the operator token (METRICS_PORT serves it on a port of its own)'
    : `  metrics: ${listeningAddress({ address: config.host, port: config.metricsPort })}/metrics (no token; not on the API port)`
}

function banner(
  config: Config,
  demo: (SandboxClientFile & { console: DemoSignIn }) | null,
  address: string,
): string {
  const lines = [
    '',
    `  svc is listening on ${address} (${config.databaseUrl ? 'PostgreSQL' : `embedded PGlite in ${config.dataDir}`})`,
    `  environments: ${config.environments.join(', ')}   API reference: ${config.baseUrl}/docs`,
    `  operator token: ${operatorTokenSource(config)}`,
    metricsLine(config),
  ]
  if (demo) {
    const clientFile = sandboxClientPath(config.dataDir)
    // `svc token` finds the file by itself only under the default DATA_DIR of the directory it runs in.
    const tokenArgs =
      clientFile === resolve('.data', 'sandbox-client.json') ? '' : ` --client-file ${clientFile}`
    lines.push(
      `  sandbox client: ${demo.client_id} (private key in ${clientFile})`,
      `  programs: ${demo.programs.map((p) => `${p.id} (${p.processor})`).join(', ')}`,
      ...consoleLines(demo.console),
      '',
      `  First call (from ${process.cwd()}):`,
      `    curl -s ${config.baseUrl}/v1/programs -H "Authorization: Bearer $(npx svc token${tokenArgs})"`,
    )
  }
  lines.push('')
  return lines.join('\n')
}

/** Fails before the database is opened when a port is taken: most often svc already runs on this DATA_DIR. */
async function assertPortFree(config: Config): Promise<void> {
  const probe = (port: number, name: string) =>
    new Promise<void>((resolvePort, reject) => {
      const server = createServer()
      server.once('error', (err: NodeJS.ErrnoException) => {
        reject(
          err.code === 'EADDRINUSE'
            ? new Error(
                `port ${port} is already in use (is svc already running? set ${name} to use another)`,
              )
            : err,
        )
      })
      server.listen(port, config.host, () => server.close(() => resolvePort()))
    })
  await probe(config.port, 'PORT')
  if (config.metricsPort !== null) await probe(config.metricsPort, 'METRICS_PORT')
}

/** Opening the database and applying migrations takes seconds on a first embedded run: a line says so before the wait. */
function announceStart(config: Config): void {
  process.stdout.write(
    `svc: opening ${config.databaseUrl ? 'PostgreSQL' : `the embedded database in ${config.dataDir}`} and applying migrations…\n`,
  )
}

export interface Serving {
  stop: () => Promise<void>
}

/** The demo client file and the demo owner's way into the console, for the banner. */
async function seededDemo(
  deps: Parameters<typeof seedDemo>[0],
): Promise<SandboxClientFile & { console: DemoSignIn }> {
  const seeded = await seedDemo(deps)
  return { ...seeded.file, console: seeded.console }
}

/**
 * `svc serve`: migrate, seed the demo on first run, listen, and run the worker in-process. With
 * HTTP_PROCESSES above 1 this process prepares the database and forks the HTTP processes (`serveCluster`);
 * each of them comes back here as a cluster worker: it listens on the shared port, and only the first
 * runs the job worker.
 */
export async function serve(config: Config): Promise<Serving> {
  if (config.httpProcesses > 1 && cluster.isPrimary) return serveCluster(config)
  const member = cluster.isWorker
  if (!member) {
    await assertPortFree(config)
    announceStart(config)
  }
  const { deps, handle, jobs } = await openRuntime(config)
  let app: FastifyInstance | null = null
  let metrics: Server | null = null
  let demo: (SandboxClientFile & { console: DemoSignIn }) | null
  let address: string
  try {
    demo = config.seedDemo && !member ? await seededDemo(deps) : null
    app = await buildApp(deps)
    await app.listen({ port: config.port, host: config.host })
    address = listeningAddress(app.server.address() as AddressInfo)
    if (config.metricsPort !== null) metrics = await serveMetrics(app.metricsRegistry, config)
  } catch (err) {
    // Release the database so the process can exit with the error instead of hanging on open handles.
    await app?.close().catch(() => {})
    await handle.close().catch(() => {})
    throw err
  }
  const worker: WorkerHandle | null =
    config.runWorker && (!member || process.env[FIRST_MEMBER] === '1')
      ? startWorker(deps, jobs)
      : null
  if (!member) process.stdout.write(`${banner(config, demo, address)}\n`)
  let stopping: Promise<void> | null = null
  const stop = () => {
    stopping ??= (async () => {
      metrics?.closeAllConnections()
      await new Promise<void>((done) => (metrics ? metrics.close(() => done()) : done()))
      await app.close()
      await worker?.stop()
      await handle.close()
    })()
    return stopping
  }
  return { stop }
}

/** Set in the environment of the HTTP process that also runs the job worker. */
const FIRST_MEMBER = 'SVC_CLUSTER_FIRST'

/**
 * The primary of HTTP_PROCESSES: migrates and seeds once, forks the HTTP processes (they share the
 * port through node:cluster), prints the banner when all listen, replaces a process that dies, and
 * stops them all on `stop`.
 */
async function serveCluster(config: Config): Promise<Serving> {
  await assertPortFree(config)
  announceStart(config)
  const { deps, handle } = await openRuntime(config)
  let demo: (SandboxClientFile & { console: DemoSignIn }) | null
  try {
    demo = config.seedDemo ? await seededDemo(deps) : null
  } finally {
    await handle.close()
  }
  let stopping = false
  const fork = (first: boolean) => {
    const member = cluster.fork(first ? { [FIRST_MEMBER]: '1' } : {})
    member.once('exit', (code, signal) => {
      if (stopping) return
      deps.log.error({ code, signal }, 'an HTTP process exited; starting another')
      setTimeout(() => {
        if (!stopping) fork(first)
      }, 1000).unref()
    })
    return member
  }
  const listening = new Promise<string>((resolveAddress, reject) => {
    let count = 0
    cluster.on('listening', (_member, addr) => {
      if (addr.port !== config.port) return // a member's METRICS_PORT
      if (++count === config.httpProcesses)
        resolveAddress(listeningAddress({ address: addr.address ?? config.host, port: addr.port }))
    })
    cluster.once('exit', (_member, code) => {
      if (count < config.httpProcesses)
        reject(new Error(`an HTTP process exited with ${code} while starting`))
    })
  })
  for (let i = 0; i < config.httpProcesses; i++) fork(i === 0)
  try {
    const address = await listening
    process.stdout.write(
      `${banner(config, demo, `${address} (${config.httpProcesses} HTTP processes)`)}\n`,
    )
  } catch (err) {
    stopping = true
    for (const member of Object.values(cluster.workers ?? {})) member?.kill('SIGTERM')
    throw err
  }
  let stopped: Promise<void> | null = null
  return {
    stop: () => {
      stopped ??= (async () => {
        stopping = true
        await Promise.all(
          Object.values(cluster.workers ?? {}).map(
            (member) =>
              member &&
              new Promise<void>((done) => {
                if (member.isDead()) return done()
                member.once('exit', () => done())
                member.kill('SIGTERM')
              }),
          ),
        )
      })()
      return stopped
    },
  }
}
