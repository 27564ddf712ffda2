import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before } from 'node:test'
import { fileURLToPath } from 'node:url'
import { JobRunner } from '../../src/jobs/runner.js'
import { signClientAssertion, tokenRequestBody } from '../../src/lib/client-assertion.js'
import { type SandboxClientFile, seedDemo } from '../../src/seed/demo.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import {
  type CodeBlock,
  codeBlocks,
  type CurlResponse,
  GuideShell,
  mismatch,
  statements,
  textMismatch,
  type CurlRequest,
  type StatementRun,
} from './runner.js'

/** The address the guides use, as `npm start` serves it. */
export const GUIDE_BASE_URL = 'http://localhost:8080'

/** Mints an access token the way `npx svc token` does with ./.data/sandbox-client.json. */
export type TokenSource = () => Promise<string>

/**
 * The app as `npm start` leaves it: the demo organization, its two sandbox programs and its client; the default
 * issuance delay. `baseUrl` is its BASE_URL (the address the guides are written for unless told otherwise).
 */
export async function startLikeNpmStart(
  baseUrl = GUIDE_BASE_URL,
): Promise<{ t: TestApp; token: TokenSource; file: SandboxClientFile }> {
  const t = await startTestApp({ env: { BASE_URL: baseUrl, CARD_ISSUE_DELAY_MS: '1000' } })
  const { file } = await seedDemo(t.deps)
  assert.equal(file.token_url, `${baseUrl}/oauth/token`)
  // What `npx svc token` does with ./.data/sandbox-client.json.
  const token = async () => {
    const assertion = await signClientAssertion({
      clientId: file.client_id,
      privateJwk: file.private_jwk,
      audience: file.token_url,
      kid: file.kid,
      nowSeconds: Math.floor(t.clock.now().getTime() / 1000),
    })
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: tokenRequestBody(assertion),
    })
    assert.equal(res.statusCode, 200, res.body)
    return res.json().access_token as string
  }
  return { t, token, file }
}

export interface GuideOptions {
  /** Only the blocks under this heading (`### Your first card`), up to the next heading of its level or above. */
  section?: string
  /** Statements run first, as what the reader already did (`TOKEN=$(npx svc token)`). */
  prelude?: string[]
}

/** The part of a document under one heading; the lines above it are kept blank so line numbers stay true. */
export function section(markdown: string, heading: string, relativePath: string): string {
  const lines = markdown.split('\n')
  const start = lines.findIndex((l) => l.trim() === heading)
  assert.ok(start >= 0, `${relativePath} has no heading "${heading}"`)
  const level = /^#+/.exec(heading)![0].length
  let end = lines.findIndex(
    (l, i) => i > start && /^#+ /.test(l) && /^#+/.exec(l)![0].length <= level,
  )
  if (end < 0) end = lines.length
  return lines.map((l, i) => (i >= start && i < end ? l : '')).join('\n')
}

export interface GuideRun {
  runs: (StatementRun & { line: number })[]
  vars: Map<string, string>
}

/** How a `curl` of a guide reaches the service. */
export type Transport = (request: CurlRequest) => Promise<CurlResponse>

/** Through `app.inject`: the app answers as a server at the address of the request would. */
export function injected(t: TestApp): Transport {
  return async (request) => {
    const url = new URL(request.url)
    const res = await t.app.inject({
      method: request.method as never,
      url: url.pathname + url.search,
      headers: request.headers,
      ...(request.body !== undefined ? { payload: request.body } : {}),
    })
    return { status: res.statusCode, body: res.body }
  }
}

export interface SessionOptions {
  /** Where the guides' calls go (default: `app.inject`). */
  transport?: Transport
  /** The address every call of the guides must go to (default: `GUIDE_BASE_URL`). */
  baseUrl?: string
  /** Why a block is not run (null: run it). Every block runs unless this says otherwise. */
  skip?: (block: CodeBlock) => string | null
  /** After each statement, what the reader does with its answer (start a program with a secret it gave, …). */
  afterStatement?: (run: StatementRun, guide: { path: string; markdown: string }) => Promise<void>
}

/**
 * One reader's terminal: guides run in it one after another share their shell variables, the service and its
 * data, as they do for someone who follows several guides in a row.
 */
export class GuideSession {
  readonly shell: GuideShell
  /** The blocks not run, each with its place and why. */
  readonly skipped: { where: string; reason: string }[] = []
  private readonly baseUrl: string
  private readonly runner: JobRunner
  /** The block running, for messages. */
  private where = ''

  constructor(
    t: TestApp,
    token: TokenSource,
    private readonly options: SessionOptions = {},
  ) {
    this.baseUrl = options.baseUrl ?? GUIDE_BASE_URL
    this.runner = new JobRunner(t.deps, t.jobs, { listen: false })
    const transport = options.transport ?? injected(t)
    this.shell = new GuideShell({
      curl: async (request: CurlRequest) => {
        const url = new URL(request.url)
        assert.equal(
          url.origin,
          this.baseUrl,
          `${this.where}: calls go to $SVC (${this.baseUrl}), not ${request.url}`,
        )
        return transport(request)
      },
      sleep: async (seconds: number) => {
        t.clock.advance(seconds * 1000)
        await this.runner.drain()
      },
      token,
    })
  }

  /**
   * Runs every ```sh block of `markdown` in order. Every HTTP call must answer 2xx (but the one whose answer the
   * guide shows as an error envelope, which must fail with that error), every variable a statement sets must be set
   * (not empty, not jq's "null"), and every answer shown after a block must agree with the real one. `sleep N` moves
   * the service clock N seconds and runs the background jobs due by then, as the worker of `npm start` would
   * meanwhile.
   */
  async run(relativePath: string, markdown: string, prelude: string[] = []): Promise<GuideRun> {
    const runs: GuideRun['runs'] = []
    this.where = relativePath
    for (const statement of prelude) await this.shell.run(statement)
    const blocks = codeBlocks(markdown).filter((b) => b.lang === 'sh')
    for (const block of blocks) {
      const where = `${relativePath}:${block.line}`
      const reason = this.options.skip?.(block) ?? null
      if (reason) {
        this.skipped.push({ where, reason })
        continue
      }
      this.where = where
      // An answer shown as an error envelope is a refusal the guide demonstrates: its block's last call may fail,
      // with that error. Every other call must succeed.
      const refusal =
        block.answer?.lang === 'json' && /^\s*\{\s*"error"\s*:/.test(block.answer.text)
      const list = statements(block.text)
      let last: StatementRun | undefined
      for (const [index, statement] of list.entries()) {
        let run: StatementRun
        try {
          run = await this.shell.run(statement)
        } catch (err) {
          throw new Error(`${where}: ${(err as Error).message}\n  in: ${statement}`)
        }
        if (process.env.GUIDE_DUMP) dump(where, statement, run)
        const mayFail = refusal && index === list.length - 1 && !run.assigned
        for (const [n, call] of run.calls.entries()) {
          if (mayFail && n === run.calls.length - 1) {
            assert.ok(
              call.response.status >= 400,
              `${where}: the guide shows a refusal, but the call answered ${call.response.status}: ${call.response.body}`,
            )
            continue
          }
          assert.ok(
            call.response.status >= 200 && call.response.status < 300,
            `${where}: ${call.request.method} ${call.request.url} answered ${call.response.status}: ${call.response.body}\n  in: ${statement}`,
          )
        }
        if (run.assigned) {
          assert.ok(
            run.assigned.value !== '' && run.assigned.value !== 'null',
            `${where}: ${run.assigned.name} is not set by: ${statement}`,
          )
        }
        await this.options.afterStatement?.(run, { path: relativePath, markdown })
        runs.push({ ...run, line: block.line })
        last = run
      }
      if (block.answer && last) checkAnswer(where, block.answer.lang, block.answer.text, last)
    }
    return { runs, vars: this.shell.vars }
  }
}

function dump(where: string, statement: string, run: StatementRun): void {
  process.stdout.write(`\n# ${where}\n$ ${statement.slice(0, 160)}\n`)
  for (const call of run.calls)
    process.stdout.write(`${call.response.status} ${prettyJson(call.response.body)}\n`)
  if (run.output) process.stdout.write(`>>>\n${run.output}`)
  if (run.assigned) process.stdout.write(`${run.assigned.name}=${run.assigned.value}\n`)
}

/** Runs every ```sh block of one guide, alone, against the app (through `app.inject`): see `GuideSession.run`. */
export async function runGuide(
  t: TestApp,
  token: TokenSource,
  relativePath: string,
  options: GuideOptions = {},
): Promise<GuideRun> {
  const path = fileURLToPath(new URL(`../../${relativePath}`, import.meta.url))
  const markdown = options.section
    ? section(readFileSync(path, 'utf8'), options.section, relativePath)
    : readFileSync(path, 'utf8')
  assert.ok(
    codeBlocks(markdown).some((b) => b.lang === 'sh'),
    `${relativePath} has no sh blocks`,
  )
  return new GuideSession(t, token).run(relativePath, markdown, options.prelude)
}

function prettyJson(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2)
  } catch {
    return body
  }
}

/**
 * The answer shown after a block is the last command's: for an assignment, the answer of the call whose
 * id it keeps; for a command, what it printed (the answer itself, or what jq made of it).
 */
function checkAnswer(where: string, lang: string, shown: string, run: StatementRun): void {
  const actual = run.assigned ? (run.calls[run.calls.length - 1]?.response.body ?? '') : run.output
  if (lang === 'json') {
    let shownValue: unknown
    let actualValue: unknown
    try {
      shownValue = JSON.parse(shown)
    } catch (err) {
      throw new Error(`${where}: the answer shown is not JSON: ${(err as Error).message}`)
    }
    try {
      actualValue = JSON.parse(actual)
    } catch {
      throw new Error(`${where}: the real answer is not JSON: ${actual}`)
    }
    const m = mismatch(shownValue, actualValue)
    assert.equal(
      m,
      null,
      `${where}: the answer shown differs from the real one: ${m}\nreal answer: ${actual}`,
    )
  } else {
    const m = textMismatch(shown, actual)
    assert.equal(m, null, `${where}: the output shown differs from the real one: ${m}`)
  }
}

/**
 * The app as `npm start` leaves it for one guide's test file: started before its tests, closed after them. The
 * fields are set once the file's `before` has run.
 */
export function guideApp(): { t: TestApp; token: TokenSource } {
  const fixture = {} as { t: TestApp; token: TokenSource }
  before(async () => {
    const { t, token } = await startLikeNpmStart()
    Object.assign(fixture, { t, token })
  })
  after(async () => {
    await fixture.t?.close()
  })
  return fixture
}

/** Fails unless the run called each of `routes` (`METHOD path`, as `routesCalled` names them). */
export function assertCalled(run: GuideRun, routes: readonly string[]): void {
  const called = routesCalled(run)
  for (const route of routes)
    assert.ok(called.includes(route), `the guide no longer calls ${route}: ${called.join(', ')}`)
}

/** Each `METHOD path` (ids replaced by `{id}`) the run called, in order. */
export function routesCalled(run: GuideRun): string[] {
  return run.runs.flatMap((r) =>
    r.calls.map(
      (c) =>
        `${c.request.method} ${new URL(c.request.url).pathname.replace(/\/[a-z0-9]+_[0-9A-Z]{26}(?=\/|$)/g, '/{id}')}`,
    ),
  )
}
