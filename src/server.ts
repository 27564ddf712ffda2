import type { FastifyInstance } from 'fastify'
import { existsSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join, resolve } from 'node:path'
import { buildApp } from './app.js'
import type { Config } from './config.js'
import { startWorker, type WorkerHandle } from './jobs/worker.js'
import { openRuntime } from './runtime.js'
import { sandboxClientPath, seedDemo, type SandboxClientFile } from './seed/demo.js'

/** Where the operator token comes from: the generated file of the embedded default, or the variable. */
function operatorTokenSource(config: Config): string {
  const file = join(config.dataDir, 'operator-token')
  const fromFile = existsSync(file) && readFileSync(file, 'utf8').trim() === config.operatorToken
  return fromFile ? file : 'the SVC_OPERATOR_TOKEN variable'
}

function banner(config: Config, demo: SandboxClientFile | null, address: string): string {
  const lines = [
    '',
    `  svc is listening on ${address} (${config.databaseUrl ? 'PostgreSQL' : `embedded PGlite in ${config.dataDir}`})`,
    `  environments: ${config.environments.join(', ')}   API reference: ${config.baseUrl}/docs`,
    `  operator token: ${operatorTokenSource(config)}`,
  ]
  if (demo) {
    const clientFile = sandboxClientPath(config.dataDir)
    // `svc token` finds the file by itself only under the default DATA_DIR of the directory it runs in.
    const tokenArgs = clientFile === resolve('.data', 'sandbox-client.json') ? '' : ` --client-file ${clientFile}`
    lines.push(
      `  sandbox client: ${demo.client_id} (private key in ${clientFile})`,
      `  programs: ${demo.programs.map((p) => `${p.id} (${p.processor})`).join(', ')}`,
      '',
      `  First call (from ${process.cwd()}):`,
      `    curl -s ${config.baseUrl}/v1/programs -H "Authorization: Bearer $(npx svc token${tokenArgs})"`,
    )
  }
  lines.push('')
  return lines.join('\n')
}

/** Fails before the database is opened when the port is taken: most often svc already runs on this DATA_DIR. */
async function assertPortFree(config: Config): Promise<void> {
  await new Promise<void>((resolvePort, reject) => {
    const probe = createServer()
    probe.once('error', (err: NodeJS.ErrnoException) => {
      reject(err.code === 'EADDRINUSE' ? new Error(`port ${config.port} is already in use (is svc already running? set PORT to use another)`) : err)
    })
    probe.listen(config.port, config.host, () => probe.close(() => resolvePort()))
  })
}

/** `svc serve`: migrate, seed the demo on first run, listen, and run the worker in-process. */
export async function serve(config: Config): Promise<{ app: FastifyInstance; stop: () => Promise<void> }> {
  await assertPortFree(config)
  const { deps, handle } = await openRuntime(config)
  let app: FastifyInstance | null = null
  let demo: SandboxClientFile | null
  let address: string
  try {
    demo = config.seedDemo ? (await seedDemo(deps)).file : null
    app = await buildApp(deps)
    address = await app.listen({ port: config.port, host: config.host })
  } catch (err) {
    // Release the database so the process can exit with the error instead of hanging on open handles.
    await app?.close().catch(() => {})
    await handle.close().catch(() => {})
    throw err
  }
  const worker: WorkerHandle | null = config.runWorker ? startWorker(deps) : null
  process.stdout.write(banner(config, demo, address) + '\n')
  let stopping: Promise<void> | null = null
  const stop = () => {
    stopping ??= (async () => {
      await app.close()
      await worker?.stop()
      await handle.close()
    })()
    return stopping
  }
  return { app, stop }
}
