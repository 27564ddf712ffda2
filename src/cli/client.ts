import { existsSync, readFileSync } from 'node:fs'
import { Svc, SvcConnectionError } from '@svc/sdk'
import type { Config } from '../config.js'
import type { Flags } from './flags.js'
import { sandboxClientPath, type SandboxClientFile } from '../seed/client-file.js'

/** Where the server is, and where the CLI learnt it (named when it cannot be reached). */
export interface ServerAddress {
  url: string
  source: string
}

/** An SDK client of the organization whose credentials are in the client file, and the address it calls. */
export interface CliClient {
  svc: Svc
  address: ServerAddress
  file: SandboxClientFile
  path: string
}

/**
 * The developer commands (`listen`, `trigger`, `events resend`) call /v1 as the organization: the client file
 * (`--client-file`, default DATA_DIR/sandbox-client.json, written by the first `npm start`) holds its client id and key.
 */
export function cliClient(
  opts: Pick<Flags, 'client-file'>,
  config: Config,
  address: ServerAddress,
): CliClient {
  const path = opts['client-file'] || sandboxClientPath(config.dataDir)
  if (!existsSync(path))
    throw new Error(
      `No client file at ${path}; start the service once with \`npm start\` to create the demo client, or pass --client-file FILE.`,
    )
  const file = JSON.parse(readFileSync(path, 'utf8')) as SandboxClientFile
  if (!file.client_id || !file.private_jwk)
    throw new Error(`${path} has no client_id and private_jwk`)
  const svc = new Svc({
    clientId: file.client_id,
    privateKey: file.private_jwk,
    keyId: file.kid,
    baseUrl: address.url,
    maxRetries: 2,
    appInfo: 'svc-cli',
  })
  return { svc, address, file, path }
}

/** A connection failure told as the address tried, where it came from and how to change it. */
export function explainConnection(err: unknown, address: ServerAddress): unknown {
  if (!(err instanceof SvcConnectionError)) return err
  const reason = /: ([A-Z_]+|[^:]+?)(?: after \d+ attempts)?$/.exec(err.message)?.[1] ?? err.message
  return new Error(
    `cannot reach the service at ${address.url} (address from ${address.source}): ${reason}. ` +
      'Is it running (`npm start`)? Point the CLI at another address with --base-url URL or BASE_URL.',
  )
}
