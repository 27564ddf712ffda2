import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { isCommand } from '../../src/cli/flags.js'
import { servedSource, WRITTEN_BASE_URL } from '../../src/modules/docs/guides.js'
import { databaseIndependent } from '../helpers/suites.js'
import { codeBlocks } from './runner.js'

/*
 * How the README and the guides write what a reader types: the CLI as it runs from the project folder
 * (`npx svc …`, or `node bin/svc.js …`), never a bare `svc` that no shell finds; and the service at
 * `http://localhost:8080` only, the address the served guides replace with the server's own.
 */

const root = fileURLToPath(new URL('../../', import.meta.url))
const guides = readdirSync(join(root, 'docs/guides'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/guides/${f}`)
const documents = ['README.md', ...guides]
const read = (path: string) => readFileSync(join(root, path), 'utf8')

/** Blocks a reader types from: shell, and unlabeled ones (commands with placeholders such as `evt_…`). */
const TYPED = new Set(['sh', 'bash', 'shell', 'console', ''])

/** The ports of the reader's own programs the guides run beside the service; any other is the service's. */
const READER_PORTS: Record<string, string> = {
  '3000': 'a webhook receiver (receive-webhooks.md, `npx svc listen --forward-to`)',
  '4343': "the authorization endpoint's program (authorization-endpoint.md)",
  '50123': 'the port `npx svc listen --authorizations` chose, in sample output (sdk-and-cli.md)',
}

/** Each `svc <command>` in `text` not run as `npx svc` or `node bin/svc.js`: the command as written. */
function bareCommands(text: string): string[] {
  const found: string[] = []
  for (const m of text.matchAll(/(?<![\w./@-])svc\s+([a-z][a-z-]*)/g)) {
    if (!isCommand(m[1]) && m[1] !== 'help') continue
    if (text.slice(0, m.index).endsWith('npx ')) continue
    found.push(text.slice(m.index).split('\n')[0])
  }
  return found
}

test('every CLI command the README and the guides give to type is written `npx svc …`', {
  skip: databaseIndependent,
}, () => {
  const bare: string[] = []
  for (const path of documents) {
    const markdown = read(path)
    for (const block of codeBlocks(markdown).filter((b) => TYPED.has(b.lang))) {
      for (const [i, line] of block.text.split('\n').entries()) {
        // A comment, or a name in backquotes (a layout's `svc serve`), is not typed.
        const typed = line.replace(/(^|\s)#.*$/, '').replace(/`[^`]*`/g, '')
        for (const command of bareCommands(typed))
          bare.push(`${path}:${block.line + 1 + i}: ${command}`)
      }
    }
    // In the text, a span that is a command with its arguments (`svc trigger --list`) is one to type; a span of
    // the command's name alone (`svc listen`, `svc events resend`) names it.
    const prose = markdown.replace(/^```[\s\S]*?^```/gm, (block) => block.replace(/[^\n]/g, ''))
    for (const [lineIndex, line] of prose.split('\n').entries()) {
      for (const [, span] of line.matchAll(/`([^`]+)`/g)) {
        const m = /^svc\s+([a-z][a-z-]*)/.exec(span)
        if (m && isCommand(m[1]) && !/^svc(\s+[a-z][a-z-]*)+$/.test(span))
          bare.push(`${path}:${lineIndex + 1}: \`${span}\``)
      }
    }
  }
  assert.deepEqual(
    bare,
    [],
    `write these as \`npx svc …\` (as run in the project folder):\n${bare.join('\n')}`,
  )
})

test('the guides name the service only as http://localhost:8080, which the served pages replace', {
  skip: databaseIndependent,
}, () => {
  const wrong: string[] = []
  const check = (path: string, text: string, firstLine: number) => {
    for (const [i, line] of text.split('\n').entries()) {
      for (const m of line.matchAll(
        /(\w+:\/\/)?(localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\]):(\d+)/g,
      )) {
        const [address, scheme, , port] = m
        if (port === '8080') {
          if (`${scheme ?? ''}${address.slice((scheme ?? '').length)}` !== WRITTEN_BASE_URL)
            wrong.push(
              `${path}:${firstLine + i}: ${address} (the service is written ${WRITTEN_BASE_URL})`,
            )
        } else if (!READER_PORTS[port]) {
          wrong.push(
            `${path}:${firstLine + i}: ${address} (not a port of the reader's own programs)`,
          )
        }
      }
    }
  }
  // A guide is served: all of it. The README is read where it is: its code (the banner it shows is npm start's).
  for (const path of guides) check(path, read(path), 1)
  for (const block of codeBlocks(read('README.md')).filter(
    (b) => b.lang !== '' && b.lang !== 'text',
  ))
    check('README.md', block.text, block.line + 1)
  assert.deepEqual(wrong, [], wrong.join('\n'))

  // Served by a server elsewhere, a guide names that server wherever it named the default one.
  for (const path of guides) {
    const served = servedSource(read(path), 'http://svc.example.com:9443')
    assert.doesNotMatch(served, /localhost:8080/, `${path} still names localhost:8080 when served`)
  }
})
