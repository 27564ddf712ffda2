import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { after, before, describe, test } from 'node:test'
import { preferredEncoding } from '../../src/http/encoding.js'
import { ERROR_CATALOGUE } from '../../src/http/errors.js'
import { escapeHtml } from '../../src/lib/html.js'
import { createDocsModule, DEFAULT_GUIDES_DIR } from '../../src/modules/docs/module.js'
import { guideHref, renderGuide, servedSource } from '../../src/modules/docs/guides.js'
import { MODULES } from '../../src/modules/index.js'
import { OAUTH_STATUS } from '../../src/modules/oauth/oauth-error.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

/** The server-rendered documentation: landing page, API reference and its assets, guides, error catalogue. */

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
  /** Every operation of /openapi.json with the anchor its section has on /docs (Redoc's form, kept for old links). */
  async function documentOperations() {
    const doc = (await get('/openapi.json')).json()
    const ops: { id: string; method: string; path: string; op: Record<string, any> }[] = []
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths))
      for (const [method, op] of Object.entries<Record<string, any>>(item)) {
        const pointer = path.replace(/~/g, '~0').replace(/\//g, '~1')
        ops.push({ id: `tag/${op.tags[0]}/paths/${pointer}/${method}`, method, path, op })
      }
    return ops
  }

  /** The section of one operation, as served. */
  function section(body: string, id: string): string {
    const at = body.indexOf(`<section class="op" id="${escapeHtml(id)}">`)
    assert.ok(at >= 0, `a section for ${id}`)
    return body.slice(at, body.indexOf('</section>', at))
  }

  test('/docs is rendered on the server: no renderer to download, this host only, and it opens on getting a token', async () => {
    const res = await get('/docs')
    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^text\/html/)
    const csp = String(res.headers['content-security-policy'])
    for (const directive of ["default-src 'none'", "script-src 'self'", "style-src 'self'"])
      assert.ok(csp.includes(directive), directive)
    assert.doesNotMatch(
      csp,
      /https?:|unsafe-inline|blob:/,
      'no remote source, no inline style or script',
    )
    // One small script (the search box) and two stylesheets, each at its hashed address; nothing else is loaded.
    const scripts = [...res.body.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1])
    assert.deepEqual(scripts, [scripts[0]])
    assert.match(scripts[0], /^\/docs\/assets\/reference\.js\?v=[\w-]{12}$/)
    assert.doesNotMatch(res.body, /<script>|redoc|openapi\.json"><\/script>/i)
    // The first heading after the title, and the first entry of the navigation: getting a token.
    const main = res.body.slice(res.body.indexOf('<main'))
    assert.match(
      main,
      /^<main id="main" class="ref-main">\n<h1>svc: card issuing and eSIM API<\/h1>/,
    )
    assert.equal(/<h2[^>]*>([^<]+)<\/h2>/.exec(main)?.[1], 'Getting an access token')
    assert.match(main, /<h2 id="section\/Getting-an-access-token"/)
    const navAt = res.body.indexOf('<nav class="ref-nav"')
    const nav = res.body.slice(navAt, res.body.indexOf('</nav>', navAt))
    assert.equal(/<a href="([^"]+)"/.exec(nav)?.[1], '#section/Getting-an-access-token')
    for (const step of ['npx svc token', 'POST /oauth/token', 'new Svc('])
      assert.ok(main.includes(escapeHtml(step)), step)
    // Tags in the document's reading order.
    const tags = [...main.matchAll(/<section class="tag" id="tag\/([^"]+)">/g)].map((m) => m[1])
    assert.equal(tags[0], 'OAuth')
    assert.deepEqual(tags.slice(-3), ['Simulator', 'Operator', 'Platform'])
  })

  test('every operation has its section: request example, curl and SDK samples, scope and capability, error codes', async () => {
    const { body } = await get('/docs')
    const ops = await documentOperations()
    assert.ok(ops.length > 100)
    for (const { id, method, path, op } of ops) {
      const html = section(body, id)
      assert.ok(
        html.includes(
          `<span class="method ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code>`,
        ),
        `${id}: method and path`,
      )
      assert.ok(html.includes(`<h3>${escapeHtml(op.summary)}</h3>`), `${id}: its summary`)
      const samples = op['x-codeSamples'] as { label: string; source: string }[]
      assert.ok(
        samples.some((s) => s.label === 'curl'),
        `${id} has a curl sample`,
      )
      for (const sample of samples)
        assert.ok(
          html.includes(
            `<figcaption>${sample.label}</figcaption><pre><code class="language-${sample.label === 'curl' ? 'sh' : 'js'}">${escapeHtml(sample.source)}</code></pre>`,
          ),
          `${id}: its ${sample.label} sample`,
        )
      if (op.requestBody)
        assert.ok(
          html.includes('<figcaption>Request body example</figcaption>'),
          `${id}: its request example`,
        )
      if (op['x-svc-scope'])
        assert.ok(
          html.includes(`<dt>Scope</dt><dd><code>${op['x-svc-scope']}</code></dd>`),
          `${id}: its scope`,
        )
      if (op['x-svc-capability'])
        assert.ok(
          html.includes(`<dt>Capability</dt><dd><code>${op['x-svc-capability']}</code>`),
          `${id}: its capability`,
        )
      if (op['x-svc-sandbox-only'])
        assert.ok(html.includes('<dt>Sandbox only</dt>'), `${id}: sandbox only`)
    }
    // One operation in full: POST /v1/cards.
    const cards = section(body, 'tag/Cards/paths/~1v1~1cards/post')
    assert.ok(cards.includes('&quot;form_factor&quot;: &quot;virtual&quot;'), 'the request example')
    assert.match(
      cards,
      /<code>form_factor<\/code> <span class="req">required<\/span><\/td><td data-label="type">string<\/td><td>One of <code>&quot;virtual&quot;<\/code>, <code>&quot;physical&quot;<\/code>\./,
    )
    assert.ok(
      cards.includes('<code>delivery_address.<wbr>postal_code</code>'),
      'nested fields are listed',
    )
    assert.ok(
      cards.includes(
        '<h5>201 Created</h5><p>Body: the <a href="#schemas/Card">Card</a> object.</p>',
      ),
    )
    assert.ok(
      cards.includes(
        '<a class="code" href="/docs/errors#cardholder_not_found">cardholder_not_found</a>',
      ),
      'error codes link the catalogue',
    )
    assert.ok(
      body.includes('<section class="object" id="schemas/Card">'),
      'the Card object has its section',
    )
    const token = section(body, 'tag/OAuth/paths/~1oauth~1token/post')
    assert.ok(
      token.includes('href="/docs/errors#oauth-invalid_client"'),
      'OAuth errors link their own anchors',
    )
  })

  test('the page and its files are compressed once, br or gzip as asked, and stay under the byte budget', async () => {
    const page = await get('/docs', { 'accept-encoding': 'gzip, deflate, br' })
    assert.equal(page.headers['content-encoding'], 'br')
    const html = brotliDecompressSync(page.rawPayload).toString('utf8')
    const plain = await get('/docs')
    assert.equal(plain.headers['content-encoding'], undefined)
    assert.equal(html, plain.body)
    const gzip = await get('/docs', { 'accept-encoding': 'gzip' })
    assert.equal(gunzipSync(gzip.rawPayload).toString('utf8'), plain.body)
    assert.equal(page.headers['cache-control'], 'no-cache')
    assert.equal(
      (await get('/docs', { 'if-none-match': String(page.headers.etag) })).statusCode,
      304,
    )
    // Everything a first visit loads: the page, its stylesheets and its script (no document, no renderer).
    const files = [...html.matchAll(/(?:href|src)="(\/docs\/assets\/[^"]+)"/g)].map((m) => m[1])
    assert.equal(files.length, 3)
    let brotli = page.rawPayload.length
    let gzipped = gzip.rawPayload.length
    let decoded = plain.body.length
    for (const file of files) {
      const res = await get(file, { 'accept-encoding': 'br' })
      assert.equal(res.statusCode, 200, file)
      assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable', file)
      brotli += res.rawPayload.length
      const z = await get(file, { 'accept-encoding': 'gzip' })
      gzipped += z.rawPayload.length
      decoded += (await get(file)).rawPayload.length
    }
    // The budget (the figures when it was set: 67 KB br, 110 KB gzip, 1.04 MB decoded; Redoc's page was 394 KB
    // gzipped and 1.6 MB decoded, its document included).
    assert.ok(brotli < 150_000, `${brotli} bytes with brotli`)
    assert.ok(gzipped < 250_000, `${gzipped} bytes with gzip`)
    assert.ok(decoded < 1_600_000, `${decoded} bytes decoded`)
  })

  test('the stylesheets and the script: a year at their hashed address, a day without it; other names are 404', async () => {
    const script = await get('/docs/assets/reference.js')
    assert.equal(script.statusCode, 200)
    assert.match(String(script.headers['content-type']), /^text\/javascript/)
    assert.match(script.body, /Search operations/)
    assert.equal(script.headers['cache-control'], 'public, max-age=86400')
    assert.equal(
      (await get('/docs/assets/reference.js?v=stale')).headers['cache-control'],
      'public, max-age=86400',
    )
    const css = await get('/docs/assets/docs.css')
    assert.match(String(css.headers['content-type']), /^text\/css/)
    assert.equal(
      (await get('/docs/assets/docs.css', { 'if-none-match': String(css.headers.etag) }))
        .statusCode,
      304,
    )
    for (const name of [
      'nope.js',
      '..%2F..%2Fpackage.json',
      'redoc.standalone.js',
      'reference.css.map',
    ]) {
      assert.equal((await get(`/docs/assets/${name}`)).statusCode, 404, name)
    }
  })

  test('Accept-Encoding: brotli when accepted, gzip next, q=0 refuses, * stands for the rest', () => {
    assert.equal(preferredEncoding('gzip, deflate, br'), 'br')
    assert.equal(preferredEncoding('gzip'), 'gzip')
    assert.equal(preferredEncoding('br;q=0, gzip'), 'gzip')
    assert.equal(preferredEncoding('gzip;q=1, br;q=0.5'), 'gzip')
    assert.equal(preferredEncoding('*'), 'br')
    assert.equal(preferredEncoding('*;q=0'), 'identity')
    assert.equal(preferredEncoding('identity'), 'identity')
    assert.equal(preferredEncoding(undefined), 'identity')
    assert.equal(preferredEncoding(['gzip', 'br']), 'br')
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
