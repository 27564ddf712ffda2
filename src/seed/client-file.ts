import { join } from 'node:path'

/**
 * The demo sandbox client as `npm start` writes it to DATA_DIR/sandbox-client.json and the CLI reads it. Apart
 * from the seeding (demo.ts) so that `svc token` and the developer commands load this file and nothing of the
 * service behind it.
 */
export interface SandboxClientFile {
  client_id: string
  organization_id: string
  environment: 'sandbox'
  token_url: string
  kid: string
  alg: 'ES256'
  private_jwk: Record<string, unknown>
  programs: { id: string; processor: string; name: string }[]
}

export function sandboxClientPath(dataDir: string): string {
  return join(dataDir, 'sandbox-client.json')
}
