import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { signClientAssertion, tokenRequestBody } from '../../src/lib/client-assertion.js'
import { servedSource } from '../../src/modules/docs/guides.js'
import type { TestApp } from '../helpers/app.js'
import { freePort } from '../sdk/support.js'
import { codeBlocks, type CodeBlock, type CurlRequest, type StatementRun } from './runner.js'
import { GuideSession, section, startLikeNpmStart, type Transport } from './support.js'

/*
 * The README and the guides as a newcomer follows them: one server, one terminal, one set of shell variables, the
 * README's quick start first, then every guide in the order the README lists them. A guide that collides with an
 * earlier one (the same email: 409) or leans on something it does not make fails here, though it passes alone.
 *
 * The server is the real application on a port of its own (not 8080): its BASE_URL is that address, and every
 * document is read as that server serves its guides (`servedSource`: `http://localhost:8080` is its address).
 * The programs the reader writes and starts (the authorization endpoint of authorization-endpoint.md) run as the
 * guide writes them, on free ports the calls' addresses are mapped to.
 */

const root = fileURLToPath(new URL('../../', import.meta.url))
const read = (relativePath: string) => readFileSync(join(root, relativePath), 'utf8')

/** The README's quick start: the sections a newcomer runs before any guide. */
const QUICK_START = ['## Set up and run', '## Your first call']

/**
 * Blocks the test does not run, and why. Anything else runs, and a command outside the guides' shell
 * (`runner.ts`) fails, so a new kind of command is either supported there or named here.
 */
const NOT_RUN: { pattern: RegExp; reason: string }[] = [
  {
    pattern: /^npm (install|start)\b/m,
    reason: '`npm start` is the server this test started; `npm install` was done',
  },
  { pattern: /^npm test\b/m, reason: 'the test suite itself' },
  {
    pattern: /\bnpx svc listen\b/,
    reason:
      'long-running: `npx svc listen` forwards events until stopped (test/cli/developer.test.ts runs it)',
  },
  {
    pattern: /\bnpx svc (trigger|events resend)\b/,
    reason:
      'the developer CLI in a child process: test/cli/developer.test.ts and trigger-all.test.ts run it',
  },
  {
    pattern: /^export |\bnpx svc (migrate|worker|serve)\b|--base-url https:/m,
    reason:
      'a production deployment (PostgreSQL, its own BASE_URL and keys), not the npm start sandbox',
  },
  {
    pattern: /^(cat > |node )/m,
    reason: "writes and runs the reader's own scripts (their own keys and client assertions)",
  },
  {
    pattern: /\bnpx svc (org|program|client|network-policy|operator|user)\b/,
    reason: 'operator commands of the CLI (test/cli runs them)',
  },
]

function notRun(block: CodeBlock): string | null {
  return NOT_RUN.find((rule) => rule.pattern.test(block.text))?.reason ?? null
}

/** The guides the README lists under "Guides, step by step", in its order. */
export function readmeGuides(readme: string): string[] {
  const lines = readme.split('\n')
  const start = lines.findIndex((l) => l.startsWith('Guides, step by step'))
  assert.ok(start >= 0, 'README.md lists the guides after "Guides, step by step"')
  const names: string[] = []
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '' && names.length > 0) break
    const m = /^- \[[^\]]+\]\(docs\/guides\/([a-z0-9-]+)\.md\)/.exec(line)
    if (m) names.push(m[1])
  }
  return names
}

/** The ports the guides' own programs listen on (a webhook receiver, an authorization endpoint): mapped to free ones. */
const READER_PORTS = [3000, 4343]

let t: TestApp
let baseUrl: string
let session: GuideSession
let port: number
const mapped = new Map<number, number>()
const programs: ChildProcess[] = []

/** A reader's address as written (`127.0.0.1:4343`) to the one it is here, and back in the answers. */
function mapAddresses(text: string, back = false): string {
  let out = text
  for (const [written, real] of mapped) {
    const [from, to] = back ? [real, written] : [written, real]
    out = out.replaceAll(`127.0.0.1:${from}/`, `127.0.0.1:${to}/`)
  }
  return out
}

/** Real HTTP to the server's port, the reader's ports mapped in the bodies. */
const overHttp: Transport = async (request: CurlRequest) => {
  const url = new URL(request.url)
  const res = await fetch(`http://127.0.0.1:${port}${url.pathname}${url.search}`, {
    method: request.method,
    headers: request.headers,
    ...(request.body !== undefined ? { body: mapAddresses(request.body) } : {}),
  })
  return { status: res.status, body: mapAddresses(await res.text(), true) }
}

/**
 * What the reader does with an answer: the first `PUT /v1/authorization_endpoint` shows the signing secret, and the
 * guide has them start its endpoint with it (`AUTH_SECRET=whsec_… node authorize.mjs`).
 */
async function afterStatement(
  run: StatementRun,
  guide: { path: string; markdown: string },
): Promise<void> {
  for (const call of run.calls) {
    if (call.request.method !== 'PUT' || !call.request.url.endsWith('/v1/authorization_endpoint'))
      continue
    const answer = JSON.parse(call.response.body) as { secret?: string; url: string }
    if (!answer.secret) continue
    const written = Number(new URL(answer.url).port)
    const program = codeBlocks(guide.markdown).find(
      (b) => b.lang === 'js' && b.text.includes(`.listen(${written},`),
    )
    assert.ok(program, `${guide.path}: no js block listens on ${written}, the endpoint registered`)
    await startProgram(
      program.text.replace(`.listen(${written},`, `.listen(${mapped.get(written)},`),
      { AUTH_SECRET: answer.secret },
    )
  }
}

async function startProgram(source: string, env: Record<string, string>): Promise<void> {
  const file = join(mkdtempSync(join(tmpdir(), 'svc-newcomer-')), 'program.mjs')
  writeFileSync(file, source)
  const child = spawn(process.execPath, [file], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  programs.push(child)
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('listening')) resolve()
    })
    child.on('exit', (code) => reject(new Error(`the guide's program exited (${code})`)))
  })
}

before(async () => {
  port = await freePort()
  for (const written of READER_PORTS) mapped.set(written, await freePort())
  baseUrl = `http://localhost:${port}`
  let file
  ;({ t, file } = await startLikeNpmStart(baseUrl))
  await t.app.listen({ port, host: '127.0.0.1' })
  // What `npx svc token` does: sign for the token URL of ./.data/sandbox-client.json, over HTTP.
  const token = async () => {
    const assertion = await signClientAssertion({
      clientId: file.client_id,
      privateJwk: file.private_jwk,
      audience: file.token_url,
      kid: file.kid,
      nowSeconds: Math.floor(t.clock.now().getTime() / 1000),
    })
    const res = await fetch(`http://127.0.0.1:${port}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: tokenRequestBody(assertion),
    })
    const body = (await res.json()) as { access_token: string }
    assert.equal(res.status, 200, JSON.stringify(body))
    return body.access_token
  }
  session = new GuideSession(t, token, {
    transport: overHttp,
    baseUrl,
    skip: notRun,
    afterStatement,
  })
})
after(async () => {
  for (const child of programs) child.kill()
  await t?.close()
})

test("every guide of docs/guides is in the README's list, which a newcomer follows", () => {
  const listed = readmeGuides(read('README.md'))
  const files = readdirSync(join(root, 'docs/guides'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => f.slice(0, -3))
  for (const name of files)
    assert.ok(listed.includes(name), `README.md does not list docs/guides/${name}.md`)
})

test("the README quick start, then every guide in the README's order, on one server and one shell", async (ctx) => {
  const readme = read('README.md')
  for (const heading of QUICK_START) {
    const markdown = servedSource(section(readme, heading, 'README.md'), baseUrl)
    await session.run('README.md', markdown)
  }
  for (const name of readmeGuides(readme)) {
    const path = `docs/guides/${name}.md`
    await session.run(path, servedSource(read(path), baseUrl))
  }
  for (const { where, reason } of session.skipped) ctx.diagnostic(`not run: ${where}: ${reason}`)
  // The first card the README made and the one of first-card.md are two cardholders' cards.
  assert.match(session.shell.vars.get('CARDHOLDER') ?? '', /^chd_/)
})

test('the guides the server serves name its own address, not the port they are written for', async () => {
  const res = await fetch(`http://127.0.0.1:${port}/docs/guides/first-card`)
  assert.equal(res.status, 200)
  const page = await res.text()
  assert.ok(page.includes(`SVC=${baseUrl}`), "the base URL of the first call is the server's")
  assert.doesNotMatch(page, /localhost:8080/)
})
