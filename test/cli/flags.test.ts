import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, test } from 'node:test'
import { isCommand, parseFlags, UsageError } from '../../src/cli/flags.js'

const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url))

/** The test's environment without DATABASE_URL: no command below reaches a database or a server. */
function withoutDatabase(): NodeJS.ProcessEnv {
  const { DATABASE_URL: _ignored, ...env } = process.env
  return env
}

const svc = (...args: string[]) =>
  spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    env: { ...withoutDatabase(), SVC_OPERATOR_TOKEN: 'x' },
    timeout: 60_000,
  })

describe("the CLI's flags (node:util parseArgs)", () => {
  test('a value follows its flag or is joined to it with =, which the value may itself hold', () => {
    const { positional, flags } = parseFlags('program', [
      'create',
      '--org',
      'org_1',
      '--env=sandbox',
      '--name',
      'Gift cards',
      '--currencies=USD,EUR',
      '--processor=a=b',
    ])
    assert.deepEqual(positional, ['create'])
    assert.deepEqual(
      { ...flags },
      {
        org: 'org_1',
        env: 'sandbox',
        name: 'Gift cards',
        currencies: 'USD,EUR',
        processor: 'a=b',
      },
    )
  })

  test('a flag followed by another flag, or by nothing, has an empty value; a value may begin with one dash', () => {
    // `--org $ORG --env x` with ORG unset: --org is empty, not "--env".
    assert.deepEqual(
      { ...parseFlags('program', ['create', '--org', '--env', 'x', '--name']).flags },
      {
        org: '',
        env: 'x',
        name: '',
      },
    )
    assert.deepEqual(
      { ...parseFlags('org', ['create', '--name', '-dash-']).flags },
      { name: '-dash-' },
    )
  })

  test('boolean flags take no value; a word after one is positional', () => {
    const invite = parseFlags('user', [
      'invite',
      '--operator',
      'x@example.test',
      '--email',
      'a@example.test',
    ])
    assert.deepEqual(invite.positional, ['invite', 'x@example.test'])
    assert.deepEqual({ ...invite.flags }, { operator: true, email: 'a@example.test' })
    assert.deepEqual({ ...parseFlags('trigger', ['--list']).flags }, { list: true })
    assert.throws(
      () => parseFlags('trigger', ['--list=yes']),
      (err: Error) => {
        assert.ok(err instanceof UsageError)
        assert.match(
          err.message,
          /'--list' does not take an argument; svc trigger takes --base-url, --client-file/,
        )
        return true
      },
    )
  })

  test('every command takes --help; after -- every word is positional', () => {
    for (const command of ['serve', 'token', 'org', 'listen', 'operator']) {
      assert.equal(parseFlags(command, ['--help']).flags.help, true, command)
    }
    const { positional, flags } = parseFlags('operator', [
      'POST',
      '/operator/v1/x',
      '--',
      '-1',
      '--name',
    ])
    assert.deepEqual(positional, ['POST', '/operator/v1/x', '-1', '--name'])
    assert.deepEqual({ ...flags }, {})
  })

  test('a flag the command does not take is a usage error naming it and the flags the command takes', () => {
    assert.throws(
      () => parseFlags('org', ['list', '--bogus', 'x']),
      (err: Error) => {
        assert.ok(err instanceof UsageError)
        assert.equal(
          err.message,
          'unknown option --bogus; svc org takes --base-url, --client-file, --name, --help' +
            ' (svc help describes them)',
        )
        return true
      },
    )
    // Another command's flag is unknown here too, and a short flag says how to pass a word that begins with '-'.
    assert.throws(
      () => parseFlags('token', ['--org', 'x']),
      /unknown option --org; svc token takes/,
    )
    assert.throws(
      () => parseFlags('org', ['create', '-x']),
      /unknown option -x \(a word that begins with '-' goes after --\)/,
    )
  })

  test('the commands are those listed, nothing inherited', () => {
    assert.equal(isCommand('org'), true)
    assert.equal(isCommand('network-policy'), true)
    assert.equal(isCommand('toString'), false)
    assert.equal(isCommand('help'), false)
    assert.equal(isCommand(undefined), false)
  })
})

describe('svc as run', () => {
  test('an unknown flag exits 2 with the reason on stderr and calls nothing', () => {
    const run = svc('org', 'list', '--bogus', '--base-url', 'http://127.0.0.1:47')
    assert.equal(run.status, 2, run.stderr)
    assert.match(
      run.stderr,
      /^svc org: unknown option --bogus; svc org takes --base-url, --client-file, --name/m,
    )
    assert.doesNotMatch(run.stderr, /cannot reach/)
    assert.equal(run.stdout, '')
  })

  test('--help on a command prints the help and exits 0, as `svc help` does', () => {
    const help = svc('help')
    assert.equal(help.status, 0, help.stderr)
    assert.match(help.stdout, /^svc: card issuing and eSIM service/)
    const onCommand = svc('org', 'list', '--help')
    assert.equal(onCommand.status, 0, onCommand.stderr)
    assert.equal(onCommand.stdout, help.stdout)
    const trigger = svc('trigger', '--help')
    assert.equal(trigger.status, 0, trigger.stderr)
    assert.match(trigger.stdout, /^svc trigger EVENT_TYPE/)
  })
})
