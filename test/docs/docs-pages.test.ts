import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { after, before, describe, test } from 'node:test'
import { ERROR_CATALOGUE } from '../../src/http/errors.js'
import { createDocsModule, DEFAULT_GUIDES_DIR } from '../../src/modules/docs/module.js'
import { guideHref, renderGuide, servedSource } from '../../src/modules/docs/guides.js'
import { MODULES } from '../../src/modules/index.js'
import { OAUTH_STATUS } from '../../src/modules/oauth/oauth-error.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

/** The server-rendered documentation: landing page, reference shell and its assets, guides, error catalogue. */

const SECRET = 'outside-the-guides-folder-7f3a'

let t: TestApp
let root: string
let guidesDir: string

before(async () => {
  // <root>/secret.md sits beside the guides folder: no URL may reach it.
  root = mkdtempSync(join(tmpdir(), 'svc-docs-'))
  guidesDir = join(root, 'guides')
  mkdirSync(guidesDir)
  writeFileSync(join(root, 'secret.md'), `# Secret\n\n${SECRET}\n`)
  writeFileSync(join(root, 'package.json'), `{"secret": "${SECRET}"}`)
  writeFileSync(
    join(guidesDir, 'first-card.md'),
    `# Your first card

Issue a card in the sandbox. Then read [the events](event-catalogue.md#card-events), the [reference](/docs) and
[\`card_closed\`](/docs/errors#card_closed).

## Issue it

\`\`\`sh
curl -s "$SVC/v1/cards" -H "Authorization: Bearer $TOKEN"
\`\`\`

<script>alert('raw html')</script>

[click](javascript:alert(1))

On a server at 8080: [its reference](http://localhost:8080/docs), and

\`\`\`sh
SVC=http://localhost:8080
\`\`\`
`,
  )
  writeFileSync(
    join(guidesDir, 'event-catalogue.md'),
    '# Event catalogue\n\nBack to [the first card](./first-card.md).\n\n## Card events\n\nText.\n\n## Card events\n\nAgain.\n',
  )
  writeFileSync(
    join(guidesDir, 'shipped-catalogue.md'),
    '# Catalogue\n\n<!-- note to editors -->\n\n<a id="card.created"></a>\n\n## card.created\n\n<a id="x" onclick="alert(1)"></a>\n',
  )
  writeFileSync(join(guidesDir, 'notes.txt'), SECRET)
  writeFileSync(join(guidesDir, 'draft.v2.md'), `# Draft\n\n${SECRET}\n`)
  symlinkSync(join(root, 'secret.md'), join(guidesDir, 'leak.md'))
  t = await startTestApp({
    modules: MODULES.map((m) => (m.name === 'docs' ? createDocsModule({ guidesDir }) : m)),
  })
})
after(async () => {
  await t?.close()
  if (root) rmSync(root, { recursive: true, force: true })
})

const get = (url: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url, headers })

describe('landing page', () => {
  test('a browser gets an HTML page at / with the links to start from', async () => {
    for (const accept of [
      'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      '*/*',
      '',
    ]) {
      const res = await get('/', accept ? { accept } : {})
      assert.equal(res.statusCode, 200, accept)
      assert.match(String(res.headers['content-type']), /^text\/html/)
    }
    const { body, headers } = await get('/')
    for (const href of [
      '/docs',
      '/docs/guides',
      '/docs/guides/event-catalogue',
      '/docs/errors',
      '/openapi.json',
      '/console',
    ]) {
      assert.ok(body.includes(`href="${href}"`), `links ${href}`)
    }
    assert.ok(body.includes('>Console<'))
    assert.doesNotMatch(body, /<script/i, 'no script needed')
    assert.match(String(headers['content-security-policy']), /default-src 'none'/)
  })

  test('a JSON client asking for / keeps the 404 envelope', async () => {
    const res = await get('/', { accept: 'application/json' })
    assert.equal(res.statusCode, 404)
    assert.equal(res.json().error.code, 'not_found')
  })
})

describe('API reference', () => {
  test('/docs loads Redoc and its starter from /docs/assets, allows no other host, and reads /openapi.json', async () => {
    const res = await get('/docs')
    assert.equal(res.statusCode, 200)
    const csp = String(res.headers['content-security-policy'])
    for (const directive of [
      "default-src 'none'",
      "script-src 'self'",
      "connect-src 'self'",
      "img-src 'self' data:",
      "font-src 'self'",
    ])
      assert.ok(csp.includes(directive), directive)
    assert.doesNotMatch(csp, /https?:/, 'no remote source is allowed')
    assert.match(
      res.body,
      /<script src="\/docs\/assets\/redoc\.standalone\.js\?v=2\.\d+\.\d+"><\/script>/,
    )
    assert.match(res.body, /<script src="\/docs\/assets\/reference\.js"><\/script>/)
    assert.match(res.body, /data-spec-url="\/openapi\.json"/)
  })

  test('the renderer bundle is served from node_modules, gzipped on request, cacheable, with no remote logo', async () => {
    const plain = await get('/docs/assets/redoc.standalone.js')
    assert.equal(plain.statusCode, 200)
    assert.match(String(plain.headers['content-type']), /^text\/javascript/)
    assert.ok(plain.body.length > 500_000)
    assert.ok(
      !plain.body.includes('cdn.redoc.ly'),
      'the attribution logo is not fetched from the CDN',
    )
    assert.doesNotMatch(plain.body, /sourceMappingURL=\S+\s*$/)
    const zipped = await t.app.inject({
      method: 'GET',
      url: '/docs/assets/redoc.standalone.js',
      headers: { 'accept-encoding': 'gzip, br' },
    })
    assert.equal(zipped.headers['content-encoding'], 'gzip')
    assert.equal(gunzipSync(zipped.rawPayload).toString('utf8'), plain.body)
    const etag = String(plain.headers.etag)
    assert.equal(
      (await get('/docs/assets/redoc.standalone.js', { 'if-none-match': etag })).statusCode,
      304,
    )
    assert.match(String(plain.headers['cache-control']), /max-age=\d+/)
  })

  test('the starter passes Redoc its options, and the stylesheet is served; other asset names are 404', async () => {
    const script = await get('/docs/assets/reference.js')
    assert.equal(script.statusCode, 200)
    assert.match(script.body, /Redoc\.init\(/)
    assert.match(script.body, /"expandResponses":"200,201,202"/)
    const css = await get('/docs/assets/docs.css')
    assert.match(String(css.headers['content-type']), /^text\/css/)
    for (const name of ['nope.js', '..%2F..%2Fpackage.json', 'redoc.standalone.js.map']) {
      assert.equal((await get(`/docs/assets/${name}`)).statusCode, 404, name)
    }
  })
})

describe('error catalogue', () => {
  test('/docs/errors anchors every catalogue code and lists every token endpoint error with its status', async () => {
    const res = await get('/docs/errors')
    assert.equal(res.statusCode, 200)
    for (const code of Object.keys(ERROR_CATALOGUE))
      assert.ok(res.body.includes(`<tr id="${code}">`), code)
    assert.ok(res.body.includes('id="token-endpoint"'))
    for (const [error, status] of Object.entries(OAUTH_STATUS)) {
      assert.match(
        res.body,
        new RegExp(
          `<tr id="oauth-${error}">\\s*<td><a href="#oauth-${error}"><code>${error}</code></a></td><td data-label="status">${status}</td>`,
        ),
        error,
      )
    }
  })
})

describe('guides', () => {
  test("the index lists every guide by its first heading, and nothing but the folder's .md files", async () => {
    const res = await get('/docs/guides')
    assert.equal(res.statusCode, 200)
    assert.ok(res.body.includes('<a href="/docs/guides/first-card">Your first card</a>'))
    assert.ok(res.body.includes('<a href="/docs/guides/event-catalogue">Event catalogue</a>'))
    assert.ok(res.body.includes('Issue a card in the sandbox.'), 'with its first paragraph')
    assert.ok(
      !res.body.includes(SECRET) &&
        !res.body.includes('/docs/guides/leak') &&
        !res.body.includes('/docs/guides/notes'),
    )
  })

  test('a guide is rendered server-side with the page chrome, working links and GitHub heading anchors', async () => {
    const res = await get('/docs/guides/first-card')
    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^text\/html/)
    assert.match(res.body, /<title>Your first card · svc guides<\/title>/)
    assert.ok(
      res.body.includes('<nav aria-label="Documentation">'),
      'the same chrome as /docs/errors',
    )
    assert.ok(res.body.includes('<h1 id="your-first-card">Your first card</h1>'))
    assert.ok(res.body.includes('<h2 id="issue-it">Issue it</h2>'))
    assert.ok(res.body.includes('href="/docs/guides/event-catalogue#card-events"'))
    assert.ok(res.body.includes('href="/docs"'))
    assert.ok(res.body.includes('<a href="/docs/errors#card_closed"><code>card_closed</code></a>'))
    assert.ok(
      res.body.includes(
        '<pre tabindex="0"><code class="language-sh">curl -s &quot;$SVC/v1/cards&quot;',
      ),
    )
    assert.ok(
      res.body.includes('&lt;script&gt;alert(&#39;raw html&#39;)&lt;/script&gt;'),
      'raw HTML is shown as text',
    )
    assert.ok(!res.body.includes('javascript:'), 'a javascript: link is dropped')
    assert.doesNotMatch(res.body, /<script/i)
    const shipped = await get('/docs/guides/shipped-catalogue')
    assert.equal(shipped.statusCode, 200)
    assert.ok(shipped.body.includes('<a id="card.created"></a>'), 'an empty anchor names its place')
    assert.ok(!shipped.body.includes('note to editors'), 'a comment is not shown')
    assert.ok(
      shipped.body.includes('&lt;a id=&quot;x&quot; onclick'),
      'any other markup stays text',
    )
    const other = await get('/docs/guides/event-catalogue')
    assert.ok(other.body.includes('href="/docs/guides/first-card"'))
    assert.ok(
      other.body.includes('<h2 id="card-events">') &&
        other.body.includes('<h2 id="card-events-1">'),
      'repeated headings are numbered',
    )
  })

  test('a guide names the server by its BASE_URL wherever it is written for http://localhost:8080', async () => {
    const res = await get('/docs/guides/first-card')
    assert.ok(res.body.includes('<a href="http://svc.test/docs">its reference</a>'))
    assert.ok(res.body.includes('<code class="language-sh">SVC=http://svc.test\n</code>'))
    assert.doesNotMatch(res.body, /localhost:8080/)
    assert.equal(
      servedSource(
        'curl http://localhost:8080/v1 and http://localhost:80800',
        'http://localhost:9090',
      ),
      'curl http://localhost:9090/v1 and http://localhost:80800',
    )
    assert.equal(
      servedSource('$SVC http://localhost:8080', 'http://a.test/$1'),
      '$SVC http://a.test/$1',
    )
  })

  test('a link written for the repository (first-card.md) redirects to the served page', async () => {
    const res = await get('/docs/guides/first-card.md')
    assert.equal(res.statusCode, 301)
    assert.equal(res.headers.location, '/docs/guides/first-card')
  })

  test('no name reaches a file outside the folder, a symlink, or a file that is not a guide', async () => {
    const attempts = [
      '/docs/guides/..%2Fsecret',
      '/docs/guides/..%2fsecret.md',
      '/docs/guides/%2e%2e%2fsecret',
      '/docs/guides/..%2F..%2Fpackage',
      '/docs/guides/..%5Csecret',
      '/docs/guides/leak',
      '/docs/guides/leak.md',
      '/docs/guides/notes',
      '/docs/guides/notes.txt',
      '/docs/guides/draft.v2',
      '/docs/guides/%00first-card',
      '/docs/guides/first-card%00',
      '/docs/guides/.',
      '/docs/guides/..',
      '/docs/guides/..%2F..%2F..%2F..%2F..%2Fetc%2Fpasswd',
      `/docs/guides/${encodeURIComponent(join(root, 'secret'))}`,
    ]
    for (const url of attempts) {
      const res = await get(url)
      assert.ok([301, 404].includes(res.statusCode), `${url}: ${res.statusCode}`)
      assert.ok(!res.body.includes(SECRET) && !res.body.includes('root:'), `${url} leaks nothing`)
      if (res.statusCode === 301)
        assert.notEqual(
          (await get(String(res.headers.location))).statusCode,
          200,
          `${url} redirects nowhere real`,
        )
    }
    const missing = await get('/docs/guides/no-such-guide')
    assert.equal(missing.statusCode, 404)
    assert.match(String(missing.headers['content-type']), /^text\/html/)
    assert.ok(missing.body.includes('href="/docs/guides"'))
  })

  test("with no guides folder the index says so; the default folder is the repository's docs/guides", async () => {
    const empty = await startTestApp({
      modules: [createDocsModule({ guidesDir: join(root, 'missing') })],
    })
    try {
      const res = await empty.app.inject({ method: 'GET', url: '/docs/guides' })
      assert.equal(res.statusCode, 200)
      assert.ok(res.body.includes('No guides yet.'))
    } finally {
      await empty.close()
    }
    assert.match(DEFAULT_GUIDES_DIR, /[/\\]docs[/\\]guides[/\\]?$/)
  })

  test('links between guides are rewritten to the served pages; other links stay; unsafe schemes go', () => {
    assert.equal(guideHref('other.md'), '/docs/guides/other')
    assert.equal(guideHref('./other.md#x'), '/docs/guides/other#x')
    assert.equal(guideHref('/docs/guides/other.md#x'), '/docs/guides/other#x')
    assert.equal(guideHref('#local'), '#local')
    assert.equal(guideHref('/docs#tag/Cards'), '/docs#tag/Cards')
    assert.equal(guideHref('https://example.com/a.md'), 'https://example.com/a.md')
    assert.equal(guideHref('javascript:alert(1)'), null)
    assert.equal(guideHref('data:text/html,x'), null)
    const { title, summary } = renderGuide('x', 'Intro without a heading.\n\n## Later heading\n')
    assert.equal(title, 'Later heading')
    assert.equal(summary, 'Intro without a heading.')
  })
})
