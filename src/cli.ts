import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError, loadConfig, type Config } from './config.js'
import { signClientAssertion, tokenRequestBody } from './lib/client-assertion.js'
import { sandboxClientPath, type SandboxClientFile } from './seed/client-file.js'
import type { ServerAddress } from './cli/client.js'
import { isCommand, parseFlags, type UsageError, type Flags } from './cli/flags.js'

const HELP = `svc: card issuing and eSIM service

  svc serve                     start the API (and the background worker unless SVC_DISABLE_WORKER=1)
  svc worker                    run only the background worker (webhooks, jobs); PostgreSQL deployments
  svc migrate                   apply database migrations and exit
  svc token [--scope "a b"] [--client-file F] [--token-url URL]
                                sign an assertion with the stored client key (default DATA_DIR/sandbox-client.json)
                                and print an access token

  The server's address, for every command that calls it: --base-url URL, else BASE_URL, else the
  token_url of the client file (--client-file, default DATA_DIR/sandbox-client.json), else
  http://localhost:PORT (PORT default 8080).

  Operator commands (call /operator/v1 with SVC_OPERATOR_TOKEN or DATA_DIR/operator-token):
  svc org create NAME
  svc org list
  svc program create --org ORG --env sandbox|production --name NAME --processor sim_full|sim_basic --currencies USD,EUR
                    [--form-factors virtual,physical] [--foreign-spend allowed|blocked] [--fx-markup-bps 0-1000]
                    [--fx-fee included|separate]
  svc program update PROGRAM_ID [--name NAME] [--foreign-spend allowed|blocked] [--fx-markup-bps 0-1000]
                    [--fx-fee included|separate]   change a program's name or foreign-exchange settings
  svc program list --org ORG
  svc client create --org ORG --env ENV --label LABEL --jwks-file FILE [--scopes a,b] [--ip-allowlist cidr,cidr]
  svc client revoke CLIENT_ID
  svc network-policy set --org ORG --env ENV [--cidrs cidr,cidr]
  svc esim inventory load FILE.csv   load blank profiles (lines: iccid,smdp_address,matching_id)
  svc esim inventory                 count profiles in stock
  svc operator METHOD PATH [JSON]   any operator call, e.g. svc operator GET /operator/v1/organizations
  svc user invite --org ORG --email EMAIL --role owner|developer|viewer
  svc user invite --operator --email EMAIL
                                print a one-time link (valid 72 hours) that sets the person's console password

  Developer commands (call /v1 as the organization of the client file: --client-file, default
  DATA_DIR/sandbox-client.json; docs/guides/sdk-and-cli.md):
  svc listen --forward-to URL [--events card.*,authorization.created] [--authorizations URL]
             [--authorizations-port N]
                                stream the organization's events (GET /v1/events/stream) and POST each to URL,
                                signed with a secret kept in the data folder (the same every session); one line
                                per event with the answer
                                --authorizations URL: relay the sandbox's authorization requests to URL for the
                                session (endpoint registered on start, removed on exit), from 127.0.0.1:N if given
  svc trigger EVENT_TYPE        run a sandbox flow that causes the event (svc trigger --list lists the types)
  svc events resend EVENT_ID [--webhook-endpoint WHE_ID]
                                deliver a stored event again to its subscribed webhook endpoints (or the one named)
`

function list(value: string | undefined): string[] | undefined {
  return value === undefined
    ? undefined
    : value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
}

/**
 * A program's foreign-exchange flags as the operator API's fields (absent flags are left out). A markup written in
 * digits is sent as a number; anything else is sent as typed, for the API to refuse with its reason.
 */
function programFxFlags(opts: Flags): Record<string, unknown> {
  const markup = opts['fx-markup-bps']
  return {
    foreign_spend: opts['foreign-spend'],
    fx_markup_bps:
      markup === undefined ? undefined : /^-?[0-9]+$/.test(markup) ? Number(markup) : markup,
    fx_fee: opts['fx-fee'],
  }
}

/** Every item of an operator list, page after page (100 at a time). */
async function operatorListAll(opts: Flags, path: string): Promise<unknown[]> {
  const items: unknown[] = []
  let cursor: string | null = null
  do {
    const sep = path.includes('?') ? '&' : '?'
    const page = (await operatorCall(
      opts,
      'GET',
      `${path}${sep}limit=100${cursor ? `&starting_after=${encodeURIComponent(cursor)}` : ''}`,
    )) as { data: unknown[]; next_cursor: string | null }
    items.push(...page.data)
    cursor = page.next_cursor
  } while (cursor)
  return items
}

export type { ServerAddress } from './cli/client.js'

/** `--base-url`, then BASE_URL, then the client file's `token_url`, then `http://localhost:PORT`. */
export function serverAddress(
  opts: Pick<Flags, 'base-url' | 'client-file'>,
  config: Config = loadConfig(),
): ServerAddress {
  if (opts['base-url']) return { url: opts['base-url'].replace(/\/+$/, ''), source: '--base-url' }
  if (config.baseUrlExplicit) return { url: config.baseUrl, source: 'BASE_URL' }
  const file = clientFilePath(opts, config)
  if (existsSync(file)) {
    try {
      const tokenUrl = (JSON.parse(readFileSync(file, 'utf8')) as Partial<SandboxClientFile>)
        .token_url
      if (typeof tokenUrl === 'string' && tokenUrl.endsWith('/oauth/token'))
        return { url: tokenUrl.slice(0, -'/oauth/token'.length), source: `token_url in ${file}` }
    } catch {
      /* an unreadable file says nothing about the address */
    }
  }
  return { url: `http://localhost:${config.port}`, source: 'PORT' }
}

function clientFilePath(opts: Pick<Flags, 'client-file'>, config: Config): string {
  return opts['client-file'] || sandboxClientPath(config.dataDir)
}

/** `fetch`, with a connection failure told as the address tried, where it came from and how to change it. */
async function reach(address: ServerAddress, url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init)
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause
    throw new Error(
      `cannot reach the service at ${address.url} (address from ${address.source}): ${cause?.code ?? cause?.message ?? (err as Error).message}. ` +
        'Is it running (`npm start`)? Point the CLI at another address with --base-url URL or BASE_URL.',
    )
  }
}

async function operatorCall(
  opts: Flags,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const config = loadConfig()
  const address = serverAddress(opts, config)
  const res = await reach(address, `${address.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${config.operatorToken}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  })
  const text = await res.text()
  const parsed = text ? JSON.parse(text) : null
  if (!res.ok) throw new Error(`${res.status} ${JSON.stringify(parsed)}`)
  return parsed
}

async function token(opts: Flags): Promise<string> {
  const config = loadConfig()
  const file = clientFilePath(opts, config)
  if (!existsSync(file))
    throw new Error(
      `No client file at ${file}; start the service once with \`npm start\` to create the demo client.`,
    )
  const client = JSON.parse(readFileSync(file, 'utf8')) as SandboxClientFile
  const address = serverAddress(opts, config)
  const tokenUrl = opts['token-url'] || `${address.url}/oauth/token`
  const assertion = await signClientAssertion({
    clientId: client.client_id,
    privateJwk: client.private_jwk,
    audience: tokenUrl,
    kid: client.kid,
  })
  const res = await reach(
    opts['token-url'] ? { url: tokenUrl, source: '--token-url' } : address,
    tokenUrl,
    {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: tokenRequestBody(assertion, opts.scope),
    },
  )
  const body = (await res.json()) as Record<string, string>
  if (!res.ok) throw new Error(`token request refused: ${body.error}: ${body.error_description}`)
  return body.access_token
}

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv
  let positional: string[] = []
  let opts: Flags = {}
  try {
    if (isCommand(command)) ({ positional, flags: opts } = parseFlags(command, rest))
  } catch (err) {
    process.stderr.write(`svc ${command}: ${(err as UsageError).message}\n`)
    process.exitCode = 2
    return
  }
  if (opts.help) {
    process.stdout.write(
      command === 'trigger' ? (await import('./cli/trigger.js')).TRIGGER_HELP : HELP,
    )
    return
  }
  try {
    switch (command) {
      case 'serve': {
        const { serve } = await import('./server.js')
        const { stop } = await serve(loadConfig())
        const shutdown = () => {
          stop().then(
            () => process.exit(0),
            () => process.exit(1),
          )
        }
        process.once('SIGINT', shutdown)
        process.once('SIGTERM', shutdown)
        return
      }
      case 'worker': {
        const { openRuntime } = await import('./runtime.js')
        const { startWorker } = await import('./jobs/worker.js')
        const config = loadConfig()
        // PGlite belongs to one process: a second one on the same DATA_DIR would corrupt it.
        if (!config.databaseUrl)
          throw new Error(
            'needs DATABASE_URL (PostgreSQL); on the embedded database `svc serve` runs the worker itself',
          )
        const { deps, handle, jobs } = await openRuntime(config)
        const worker = startWorker(deps, jobs)
        deps.log.info('worker started')
        const shutdown = () => {
          worker
            .stop()
            .then(() => handle.close())
            .then(
              () => process.exit(0),
              () => process.exit(1),
            )
        }
        process.once('SIGINT', shutdown)
        process.once('SIGTERM', shutdown)
        return
      }
      case 'migrate': {
        const { openDatabase } = await import('./db/client.js')
        const { migrateToLatest } = await import('./db/migrate.js')
        const config = loadConfig()
        const handle = await openDatabase({
          databaseUrl: config.databaseUrl,
          dataDir: join(config.dataDir, 'pgdata'),
        })
        const applied = await migrateToLatest(handle.db)
        await handle.close()
        console.log(applied.length ? `applied: ${applied.join(', ')}` : 'schema is up to date')
        return
      }
      case 'token':
        console.log(await token(opts))
        return
      case 'org':
        if (positional[0] === 'create')
          return print(
            await operatorCall(opts, 'POST', '/operator/v1/organizations', {
              name: positional.slice(1).join(' ') || opts.name,
            }),
          )
        if (positional[0] === 'list')
          return print(await operatorListAll(opts, '/operator/v1/organizations'))
        break
      case 'program':
        if (positional[0] === 'create') {
          return print(
            await operatorCall(opts, 'POST', '/operator/v1/programs', {
              organization_id: opts.org,
              environment: opts.env,
              name: opts.name,
              processor: opts.processor,
              currencies: list(opts.currencies),
              form_factors: list(opts['form-factors']),
              ...programFxFlags(opts),
            }),
          )
        }
        if (positional[0] === 'update' && positional[1]) {
          return print(
            await operatorCall(
              opts,
              'PATCH',
              `/operator/v1/programs/${encodeURIComponent(positional[1])}`,
              {
                name: opts.name,
                ...programFxFlags(opts),
              },
            ),
          )
        }
        if (positional[0] === 'list')
          return print(
            await operatorListAll(
              opts,
              `/operator/v1/programs?organization_id=${encodeURIComponent(opts.org ?? '')}`,
            ),
          )
        break
      case 'client':
        if (positional[0] === 'create') {
          const jwksFile = opts['jwks-file']
          if (!jwksFile)
            throw new Error("name the client's public keys: svc client create … --jwks-file FILE")
          return print(
            await operatorCall(opts, 'POST', '/operator/v1/clients', {
              organization_id: opts.org,
              environment: opts.env,
              label: opts.label,
              jwks: JSON.parse(readFileSync(jwksFile, 'utf8')),
              scopes: list(opts.scopes),
              ip_allowlist: list(opts['ip-allowlist']),
            }),
          )
        }
        if (positional[0] === 'revoke')
          return print(
            await operatorCall(opts, 'POST', `/operator/v1/clients/${positional[1]}/revoke`),
          )
        break
      case 'network-policy':
        if (positional[0] === 'set') {
          return print(
            await operatorCall(
              opts,
              'PUT',
              `/operator/v1/organizations/${opts.org}/network_policy`,
              { environment: opts.env, ip_allowlist: list(opts.cidrs) ?? [] },
            ),
          )
        }
        break
      case 'esim':
        if (positional[0] === 'inventory' && positional[1] === 'load')
          return print(await loadInventoryFile(opts, positional[2]))
        if (positional[0] === 'inventory')
          return print(await operatorCall(opts, 'GET', '/operator/v1/esim/inventory'))
        break
      case 'user':
        if (positional[0] === 'invite') return printInvitation(await inviteConsoleUser(opts))
        break
      case 'listen':
      case 'trigger':
      case 'events':
        if (await developerCommand(command, positional, opts)) return
        break
      case 'operator':
        return print(
          await operatorCall(
            opts,
            positional[0].toUpperCase(),
            positional[1],
            positional[2] ? JSON.parse(positional[2]) : undefined,
          ),
        )
      case undefined:
      case 'help':
      case '--help':
        process.stdout.write(HELP)
        return
    }
    process.stderr.write(`unknown command: ${argv.join(' ')}\n\n${HELP}`)
    process.exitCode = 2
  } catch (err) {
    process.stderr.write(
      `svc ${command}: ${err instanceof ConfigError ? err.message : (err as Error).message}\n`,
    )
    process.exitCode = 1
  }
}

/** `svc listen`, `svc trigger`, `svc events resend`: /v1 calls through the SDK as the client file's organization. False when the arguments name no command. */
async function developerCommand(
  command: string,
  positional: string[],
  opts: Flags,
): Promise<boolean> {
  const { TRIGGER_HELP, TRIGGER_LIST, trigger } = await import('./cli/trigger.js')
  if (command === 'trigger' && opts.list) {
    process.stdout.write(TRIGGER_LIST)
    return true
  }
  if (command === 'trigger' && !positional[0]) {
    process.stdout.write(TRIGGER_HELP)
    return true
  }
  if (command === 'events' && positional[0] !== 'resend') return false
  const config = loadConfig()
  const { cliClient, explainConnection } = await import('./cli/client.js')
  const address = serverAddress(opts, config)
  const client = cliClient(opts, config, address)
  try {
    if (command === 'listen') {
      if (!opts['forward-to'])
        throw new Error(
          'name where to forward events: svc listen --forward-to http://localhost:3000/webhooks',
        )
      const { listen, listenSecretFile } = await import('./cli/listen.js')
      const controller = new AbortController()
      const stop = () => controller.abort()
      process.once('SIGINT', stop)
      process.once('SIGTERM', stop)
      const port = opts['authorizations-port']
      if (port !== undefined && !/^\d{1,5}$/.test(port))
        throw new Error(`--authorizations-port takes a port number, not ${JSON.stringify(port)}`)
      await listen(client, {
        forwardTo: opts['forward-to'],
        authorizationsPort: port === undefined ? undefined : Number(port),
        secretFile: listenSecretFile(
          config.dataDir,
          client.file.organization_id ?? 'organization',
          client.file.environment ?? 'sandbox',
        ),
        types: list(opts.events),
        authorizations: opts.authorizations || undefined,
        signal: controller.signal,
        out: (line) => console.log(line),
        err: (line) => console.error(line),
      })
      return true
    }
    if (command === 'trigger') {
      const id = await trigger(client.svc, positional[0], (line) => console.log(`  ${line}`), {
        currency: opts.currency,
      })
      console.log(
        id
          ? `Triggered ${positional[0]}: ${id}`
          : `Ran the flow for ${positional[0]}; its event is not listed yet`,
      )
      return true
    }
    if (!positional[1]) throw new Error('name the event: svc events resend evt_…')
    print(
      await client.svc.events.replay(
        positional[1],
        opts['webhook-endpoint'] ? { webhook_endpoint_id: opts['webhook-endpoint'] } : {},
      ),
    )
    return true
  } catch (err) {
    throw explainConnection(err, address)
  }
}

/** Loads a CSV of blank profiles through the operator API, in batches; answers how many were loaded. */
async function loadInventoryFile(
  opts: Flags,
  file: string | undefined,
): Promise<{ loaded: number; lines: number }> {
  if (!file) throw new Error('name the CSV file: svc esim inventory load FILE.csv')
  const { inBatches, parseInventoryCsv } = await import('./modules/esim/inventory-csv.js')
  const profiles = parseInventoryCsv(readFileSync(file, 'utf8'))
  let loaded = 0
  for (const batch of inBatches(profiles)) {
    const answer = (await operatorCall(opts, 'POST', '/operator/v1/esim/inventory', {
      profiles: batch,
    })) as { loaded: number }
    loaded += answer.loaded
  }
  return { loaded, lines: profiles.length }
}

function print(value: unknown): void {
  console.log(JSON.stringify(value, null, 2))
}

interface InvitationAnswer {
  email: string
  role: string
  organization_id: string | null
  url: string
  expires_at: string
}

/** `svc user invite`: a member of an organization (`--org`, `--role`) or a platform operator (`--operator`). */
async function inviteConsoleUser(opts: Flags): Promise<InvitationAnswer> {
  if (!opts.email)
    throw new Error(
      'name the person: svc user invite --email EMAIL (--org ORG --role owner|developer|viewer, or --operator)',
    )
  const operator = opts.operator === true
  if (operator && (opts.org || opts.role))
    throw new Error(
      'an operator belongs to no organization: use --operator without --org and --role',
    )
  if (!operator && (!opts.org || !opts.role))
    throw new Error(
      'a member needs --org ORG and --role owner|developer|viewer (or invite an operator with --operator)',
    )
  const body = operator
    ? { email: opts.email, role: 'operator' }
    : { email: opts.email, role: opts.role, organization_id: opts.org }
  return (await operatorCall(
    opts,
    'POST',
    '/operator/v1/users/invitations',
    body,
  )) as InvitationAnswer
}

function printInvitation(invitation: InvitationAnswer): void {
  const who = invitation.organization_id
    ? `${invitation.role} of ${invitation.organization_id}`
    : 'platform operator'
  console.log(
    `Invitation for ${invitation.email} (${who}). Send this one-time link; it sets the password and works until ${invitation.expires_at}:`,
  )
  console.log(invitation.url)
}
