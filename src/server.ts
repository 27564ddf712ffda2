import type { FastifyInstance } from 'fastify'
import { join } from 'node:path'
import { buildApp } from './app.js'
import type { Config } from './config.js'
import { startWorker, type WorkerHandle } from './jobs/worker.js'
import { openRuntime } from './runtime.js'
import { seedDemo, type SandboxClientFile } from './seed/demo.js'

function banner(config: Config, demo: SandboxClientFile | null, address: string): string {
  const lines = [
    '',
    `  svc is listening on ${address} (${config.databaseUrl ? 'PostgreSQL' : `embedded PGlite in ${config.dataDir}`})`,
    `  environments: ${config.environments.join(', ')}   API reference: ${config.baseUrl}/docs`,
    `  operator token: ${config.databaseUrl ? 'SVC_OPERATOR_TOKEN' : join(config.dataDir, 'operator-token')}`,
  ]
  if (demo) {
    lines.push(
      `  sandbox client: ${demo.client_id} (private key in ${join(config.dataDir, 'sandbox-client.json')})`,
      `  programs: ${demo.programs.map((p) => `${p.id} (${p.processor})`).join(', ')}`,
      '',
      '  First call:',
      `    curl -s ${config.baseUrl}/v1/programs -H "Authorization: Bearer $(npx svc token)"`,
    )
  }
  lines.push('')
  return lines.join('\n')
}

/** `svc serve`: migrate, seed the demo on first run, listen, and run the worker in-process. */
export async function serve(config: Config): Promise<{ app: FastifyInstance; stop: () => Promise<void> }> {
  const { deps, handle } = await openRuntime(config)
  const demo = config.seedDemo ? (await seedDemo(deps)).file : null
  const app = await buildApp(deps)
  const address = await app.listen({ port: config.port, host: config.host })
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
