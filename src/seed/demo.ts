import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { exportJWK, generateKeyPair } from 'jose'
import type { AppDeps } from '../app-deps.js'
import { createClient } from '../modules/oauth/clients.js'
import { SCOPES } from '../modules/oauth/scopes.js'
import { createOrganization } from '../modules/oauth/organizations.js'
import { createProgram } from '../modules/programs/service.js'
import { demoOwnerSignIn, type DemoSignIn } from '../modules/users/index.js'
import { sandboxClientPath, type SandboxClientFile } from './client-file.js'

export { sandboxClientPath, type SandboxClientFile } from './client-file.js'

/** The demo organization's owner, seeded by `npm start`; the banner prints how they get into the console. */
export const DEMO_OWNER_EMAIL = 'owner@demo.test'

/** The demo client recorded on disk when it still exists in the database, else null. */
async function demoPresent(deps: AppDeps, path: string): Promise<SandboxClientFile | null> {
  if (!existsSync(path)) return null
  try {
    const file = JSON.parse(readFileSync(path, 'utf8')) as SandboxClientFile
    const row = await deps.db
      .selectFrom('oauth_clients')
      .select('id')
      .where('id', '=', file.client_id)
      .executeTakeFirst()
    return row ? file : null
  } catch {
    return null
  }
}

function writeClientFile(deps: AppDeps, path: string, file: SandboxClientFile): void {
  mkdirSync(deps.config.dataDir, { recursive: true })
  writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 })
}

/**
 * First run: a demo organization, one sandbox program per simulated processor, and a sandbox client
 * whose private key is written to DATA_DIR/sandbox-client.json (the service itself keeps only the public key).
 * Every run: the demo owner (`owner@demo.test`) and how they sign in to the console (`console`): a fresh
 * one-time link while they have set no password, else the sign-in page.
 */
export async function seedDemo(
  deps: AppDeps,
): Promise<{ file: SandboxClientFile; created: boolean; console: DemoSignIn }> {
  const seeded = await seedDemoClient(deps)
  return {
    ...seeded,
    console: await demoOwnerSignIn(deps, seeded.file.organization_id, DEMO_OWNER_EMAIL),
  }
}

async function seedDemoClient(
  deps: AppDeps,
): Promise<{ file: SandboxClientFile; created: boolean }> {
  const path = sandboxClientPath(deps.config.dataDir)
  const tokenUrl = `${deps.config.baseUrl}/oauth/token`
  const existing = await demoPresent(deps, path)
  if (existing) {
    // A restart with another PORT or BASE_URL changes the token audience; `svc token` reads it from this file.
    const file = { ...existing, token_url: tokenUrl }
    if (existing.token_url !== tokenUrl) writeClientFile(deps, path, file)
    return { file, created: false }
  }

  const org = await createOrganization(deps, 'Demo organization')
  const full = await createProgram(deps, {
    organization_id: org.id,
    environment: 'sandbox',
    name: 'Demo debit (sim_full)',
    processor: 'sim_full',
    currencies: ['USD', 'EUR', 'GBP'],
  })
  const basic = await createProgram(deps, {
    organization_id: org.id,
    environment: 'sandbox',
    name: 'Demo prepaid (sim_basic)',
    processor: 'sim_basic',
    currencies: ['USD', 'EUR'],
  })
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true })
  const kid = 'demo-1'
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }
  const client = await createClient(deps, {
    organization_id: org.id,
    environment: 'sandbox',
    label: 'Demo sandbox client',
    // Every scope but clients:write, which is never granted by default (the operator may grant it).
    scopes: SCOPES.filter((s) => s !== 'clients:write'),
    jwks: { keys: [publicJwk] },
  })
  const file: SandboxClientFile = {
    client_id: client.id,
    organization_id: org.id,
    environment: 'sandbox',
    token_url: tokenUrl,
    kid,
    alg: 'ES256',
    private_jwk: { ...(await exportJWK(privateKey)), kid, alg: 'ES256' },
    programs: [full, basic].map((p) => ({ id: p.id, processor: p.processor, name: p.name })),
  }
  writeClientFile(deps, path, file)
  return { file, created: true }
}
