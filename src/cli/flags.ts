import { parseArgs, type ParseArgsConfig } from 'node:util'

/** Every flag of the CLI, by name; each command takes those `COMMAND_FLAGS` lists for it, and `--help`. */
const FLAGS = {
  'base-url': { type: 'string' },
  'client-file': { type: 'string' },
  help: { type: 'boolean' },
  scope: { type: 'string' },
  'token-url': { type: 'string' },
  name: { type: 'string' },
  org: { type: 'string' },
  env: { type: 'string' },
  processor: { type: 'string' },
  currencies: { type: 'string' },
  currency: { type: 'string' },
  'form-factors': { type: 'string' },
  'foreign-spend': { type: 'string' },
  'fx-markup-bps': { type: 'string' },
  'fx-fee': { type: 'string' },
  label: { type: 'string' },
  'jwks-file': { type: 'string' },
  scopes: { type: 'string' },
  'ip-allowlist': { type: 'string' },
  cidrs: { type: 'string' },
  email: { type: 'string' },
  role: { type: 'string' },
  operator: { type: 'boolean' },
  'forward-to': { type: 'string' },
  events: { type: 'string' },
  authorizations: { type: 'string' },
  'authorizations-port': { type: 'string' },
  list: { type: 'boolean' },
  'webhook-endpoint': { type: 'string' },
} as const satisfies Record<string, { type: 'string' | 'boolean' }>

export type FlagName = keyof typeof FLAGS

/** The flags given to a command: a string flag's value (empty when none followed it), true for a boolean one. */
export type Flags = {
  [K in FlagName]?: (typeof FLAGS)[K]['type'] extends 'boolean' ? boolean : string
}

/** Where the server is (`serverAddress`): every command that calls it takes these. */
const ADDRESS = ['base-url', 'client-file'] as const

/** The flags each command takes (besides `--help`); a command not listed here is unknown. */
const COMMAND_FLAGS: Record<string, readonly FlagName[]> = {
  serve: [],
  worker: [],
  migrate: [],
  token: [...ADDRESS, 'scope', 'token-url'],
  org: [...ADDRESS, 'name'],
  program: [
    ...ADDRESS,
    'org',
    'env',
    'name',
    'processor',
    'currencies',
    'form-factors',
    'foreign-spend',
    'fx-markup-bps',
    'fx-fee',
  ],
  client: [...ADDRESS, 'org', 'env', 'label', 'jwks-file', 'scopes', 'ip-allowlist'],
  'network-policy': [...ADDRESS, 'org', 'env', 'cidrs'],
  esim: ADDRESS,
  user: [...ADDRESS, 'email', 'org', 'role', 'operator'],
  operator: ADDRESS,
  listen: [...ADDRESS, 'forward-to', 'events', 'authorizations', 'authorizations-port'],
  trigger: [...ADDRESS, 'list', 'currency'],
  events: [...ADDRESS, 'webhook-endpoint'],
}

/** Arguments the command cannot take: told on stderr, with exit status 2 (as an unknown command is). */
export class UsageError extends Error {}

/** Whether `command` is one `parseFlags` knows. */
export function isCommand(command: string | undefined): command is string {
  return command !== undefined && Object.hasOwn(COMMAND_FLAGS, command)
}

/**
 * A string flag with nothing after it, or with another flag after it (`--org $ORG --env x` with ORG unset), has an
 * empty value, not "--env"; a value that begins with one dash is still the flag's value (`--name -x`). parseArgs
 * refuses both as ambiguous, so they reach it written with `=`: `--org=`, `--name=-x`. After `--` every argument is
 * positional.
 */
function explicitValues(args: string[], options: ParseArgsConfig['options'] & {}): string[] {
  const out: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    if (arg === '--') {
      out.push(...args.slice(i))
      break
    }
    const name = arg.startsWith('--') && !arg.includes('=') ? arg.slice(2) : undefined
    const next = args[i + 1]
    if (name === undefined || options[name]?.type !== 'string') out.push(arg)
    else if (next === undefined || next.startsWith('--')) out.push(`${arg}=`)
    else if (next.startsWith('-')) out.push(`${arg}=${args[++i]}`)
    else out.push(arg)
  }
  return out
}

/** The command's arguments: its positional words and its flags; a flag it does not take is a `UsageError`. */
export function parseFlags(
  command: string,
  args: string[],
): { positional: string[]; flags: Flags } {
  const names: FlagName[] = [...COMMAND_FLAGS[command], 'help']
  const options = Object.fromEntries(names.map((name) => [name, FLAGS[name]]))
  try {
    const { values, positionals } = parseArgs({
      args: explicitValues(args, options),
      options,
      strict: true,
      allowPositionals: true,
    })
    return { positional: positionals, flags: values as Flags }
  } catch (err) {
    const { code, message } = err as { code?: string; message: string }
    const takes = `svc ${command} takes ${names.map((name) => `--${name}`).join(', ')}`
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const flag = /^Unknown option '([^']+)'/.exec(message)?.[1] ?? message
      const dash = flag.startsWith('--') ? '' : " (a word that begins with '-' goes after --)"
      throw new UsageError(`unknown option ${flag}${dash}; ${takes} (svc help describes them)`)
    }
    throw new UsageError(`${message.split('\n')[0]}; ${takes}`)
  }
}
