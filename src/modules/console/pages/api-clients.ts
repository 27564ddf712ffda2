import type { FastifyReply } from 'fastify'
import {
  createClientFor,
  DEFAULT_CLIENT_SCOPES,
  listClientsOf,
  memberGrantableScopes,
  ownClient,
  revokeClientFor,
  updateClientFor,
  type ClientRecord,
} from '../../oauth/index.js'
import {
  checkboxGroup,
  cursorPager,
  details,
  field,
  formatTime,
  postForm,
  table,
  textareaField,
  type Flash,
} from '../components.js'
import { attrs, html, raw, type Html } from '../../../lib/html.js'
import type { ConsolePage, PageContext } from '../router.js'
import {
  addKeySection,
  ALLOWLIST_HINT,
  allowlistChanged,
  allowlistOf,
  allowlistText,
  keptKeys,
  keysAfterAdding,
  keysAfterRemoving,
  keysTable,
  KEYS_HINT,
  LABEL_REFUSAL,
  pastedKeys,
} from './client-forms.js'
import { canChange } from './developer-shared.js'
import { audited, ENV_LABEL, many, param, query, refusal } from './operator-shared.js'

/**
 * The organization's API clients of the selected environment (Developers → API clients): the list, registering one
 * (a pasted JWK Set, JWK or PEM public key, or a key pair generated in the browser whose private half is downloaded
 * and never sent), its label and scopes, its IP allowlist, adding and removing keys, and revoking it after a
 * confirmation. Everything goes through the services of `/v1/oauth_clients` (oauth `createClientFor`,
 * `updateClientFor`, `revokeClientFor`) with the scopes a member may grant, and is audited in their transactions.
 */

export const API_CLIENTS = '/console/developers/api-clients'

const NAMED_ONLY_HINT =
  "What its tokens may do. Ticked at first: the defaults. cards:secrets (PINs, full card details) and clients:write (manage the organization's clients, keys included) are given only when ticked here; the authentications scopes are put in tokens only where this deployment runs 3-D Secure."
const CONFIRM_REFUSAL = 'Tick the box to confirm the revocation: it cannot be undone.'

function grantableOptions(ctx: PageContext): [string, string][] {
  return [...memberGrantableScopes()].map((s) => [s, s])
}

function envLabel(ctx: PageContext): string {
  return ENV_LABEL[ctx.scope!.environment] ?? ctx.scope!.environment
}

function statusText(client: ClientRecord): Html | string {
  return client.status === 'active'
    ? 'Active'
    : html`Revoked${client.revoked_at ? html` ${formatTime(new Date(client.revoked_at))}` : ''}`
}

/** Short values in code, one each, so a long list wraps between them in a table cell. */
function codes(values: readonly string[], none: string, wrap = false): Html | string {
  const code = attrs({ class: wrap && 'wrap' })
  return values.length > 0
    ? html`${values.map((v, i) => html`${i > 0 ? ' ' : ''}<code${code}>${v}</code>`)}`
    : none
}

async function listPage(ctx: PageContext): Promise<FastifyReply> {
  const after = query(ctx, 'after')
  const page = await listClientsOf(ctx.deps, ctx.scope!, API_CLIENTS, {
    limit: 25,
    ...(after ? { starting_after: after } : {}),
  })
  return ctx.render({
    title: 'API clients',
    body: html`<p class="muted">The ${envLabel(ctx)} clients of ${ctx.organizationName ?? 'your organization'}: each signs its token requests with a private key that stays with it; the service holds only the public keys. Switch the environment at the top to see the others.</p>
${canChange(ctx) ? html`<p><a href="${API_CLIENTS}/new">Register a client</a></p>` : ''}
${table({
  caption: `${envLabel(ctx)} API clients, newest first`,
  rows: page.data,
  empty: `No ${envLabel(ctx).toLowerCase()} client yet.`,
  columns: [
    {
      header: 'Label',
      cell: (c: ClientRecord) =>
        html`<a href="${API_CLIENTS}/${c.id}">${c.label}</a><br><code>${c.id}</code>`,
    },
    { header: 'Scopes', cell: (c) => codes(c.scopes, 'None') },
    {
      header: 'Keys',
      cell: (c) =>
        html`${c.jwks.keys.length}<br>${codes(
          c.jwks.keys.map((k) => (typeof k.kid === 'string' ? k.kid : 'no kid')),
          '',
          true,
        )}`,
    },
    {
      header: 'IP allowlist',
      cell: (c) =>
        c.ip_allowlist && c.ip_allowlist.length > 0
          ? html`<code>${c.ip_allowlist.join(', ')}</code>`
          : 'Any address',
    },
    { header: 'Status', cell: (c) => statusText(c) },
    { header: 'Created', cell: (c) => formatTime(new Date(c.created_at)) },
  ],
})}
${cursorPager(API_CLIENTS, {}, page.has_more ? page.next_cursor : null, !after)}`,
  })
}

/**
 * Makes an ES256 key pair with WebCrypto in this page: the public JWK (with its RFC 7638 thumbprint as kid) goes into
 * the keys field, the private JWK is offered as a file to download (the format of docs/guides/going-to-production.md's
 * private-key.json). The private key is never put in a form field, so it is never sent.
 */
const KEYGEN_SCRIPT = `(() => {
  const box = document.getElementById('keygen')
  const button = document.getElementById('keygen-button')
  const field = document.getElementById('f-keys')
  const note = document.getElementById('keygen-status')
  const link = document.getElementById('keygen-download')
  if (!box || !button || !field || !note || !link || !window.crypto || !crypto.subtle || !window.isSecureContext) return
  box.hidden = false
  const b64url = (buffer) => btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '')
  button.addEventListener('click', async () => {
    button.disabled = true
    note.textContent = 'Making a key pair…'
    try {
      const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])
      const pub = await crypto.subtle.exportKey('jwk', pair.publicKey)
      const priv = await crypto.subtle.exportKey('jwk', pair.privateKey)
      const thumbprint = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(JSON.stringify({ crv: pub.crv, kty: pub.kty, x: pub.x, y: pub.y })))
      const kid = b64url(thumbprint)
      field.value = JSON.stringify({ keys: [{ kty: 'EC', crv: 'P-256', x: pub.x, y: pub.y, kid, alg: 'ES256', use: 'sig' }] }, null, 2)
      const file = { kid, private_jwk: { kty: 'EC', crv: 'P-256', x: priv.x, y: priv.y, d: priv.d, kid, alg: 'ES256' } }
      if (link.href.startsWith('blob:')) URL.revokeObjectURL(link.href)
      link.href = URL.createObjectURL(new Blob([JSON.stringify(file, null, 2) + '\\n'], { type: 'application/json' }))
      link.hidden = false
      note.textContent = 'A key pair is made (kid ' + kid + '): its public key is in the field above. Download the private key now and keep it in your secret store; it exists only in this page, is never sent, and is gone when you leave.'
    } catch (err) {
      note.textContent = 'This browser could not make a key pair (' + (err && err.message ? err.message : err) + '): paste a public key instead.'
    } finally {
      button.disabled = false
    }
  })
})()`

function keygenSection(ctx: PageContext): Html {
  const nonce = ctx.req.consoleState!.nonce
  return html`<div id="keygen" class="card" hidden><h2 id="keygen-h">Or generate a key pair in this browser</h2>
<p class="muted">An ES256 (EC P-256) key pair is made here with the browser's WebCrypto. Its public key fills the field above; its private key is offered as a file to download and is never sent to the service.</p>
<button type="button" class="secondary" id="keygen-button">Generate a key pair in this browser</button>
<p id="keygen-status" role="status" aria-live="polite"></p>
<p><a id="keygen-download" href="#keygen" download="private-key.json" hidden>Download the private key (private-key.json)</a></p></div>
<script nonce="${nonce}">${raw(KEYGEN_SCRIPT)}</script>`
}

interface CreateForm {
  label?: string
  keys?: string
  scopes?: string[]
  ip_allowlist?: string
}

function createPage(
  ctx: PageContext,
  form: CreateForm = {},
  flash?: Flash,
  status = 200,
): FastifyReply {
  const grantable = memberGrantableScopes()
  return ctx.render(
    {
      title: 'Register an API client',
      flash,
      body: html`<p class="muted">A ${envLabel(ctx)} client of ${ctx.organizationName ?? 'your organization'}. It signs its token requests with a private key that never leaves its systems; register its public key here.</p>
<div class="card">${postForm(
        API_CLIENTS,
        ctx.csrf,
        html`${field({ name: 'label', label: 'Label', value: form.label, required: true, maxlength: 200, hint: 'What the client is, for the people who read this list: "Payments backend".' })}
${checkboxGroup('scopes', 'Scopes', grantableOptions(ctx), form.scopes ?? DEFAULT_CLIENT_SCOPES.filter((s) => grantable.has(s)), { hint: NAMED_ONLY_HINT })}
${textareaField({ name: 'ip_allowlist', label: 'IP allowlist', value: form.ip_allowlist, rows: 3, mono: true, hint: ALLOWLIST_HINT, maxlength: 4000 })}
${textareaField({ name: 'keys', label: 'Public keys', value: form.keys, rows: 8, required: true, mono: true, hint: KEYS_HINT, maxlength: 12_000 })}
${keygenSection(ctx)}
<button type="submit" class="primary">Register client</button>`,
        { label: 'Register an API client' },
      )}</div>`,
    },
    status,
  )
}

/** How the client gets a token: the assertion's claims and the curl of POST /oauth/token (docs/guides/going-to-production.md). */
function tokenHowTo(ctx: PageContext, client: ClientRecord): Html {
  const tokenUrl = `${ctx.deps.config.baseUrl}/oauth/token`
  const curl = `curl -s -X POST ${tokenUrl} \\
  -d grant_type=client_credentials \\
  -d client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer \\
  -d client_assertion="$ASSERTION"`
  return html`<section class="card" aria-labelledby="token-h"><h2 id="token-h">Get a token</h2>
<p>Sign a client assertion, a JWT (<code>ES256</code> for an EC key, <code>RS256</code> for RSA) with the key's <code>kid</code> in its header and the claims <code>iss</code> and <code>sub</code> = <code>${client.id}</code>, <code>aud</code> = <code>${tokenUrl}</code>, <code>iat</code> = now, <code>exp</code> within 5 minutes and a fresh <code>jti</code>. Then exchange it for an access token (valid 15 minutes):</p>
<pre><code>${curl}</code></pre>
<p class="muted">With a private-key.json made on this page, add <code>"client_id": "${client.id}"</code> to it and run <code>npx svc token --client-file private-key.json --base-url ${ctx.deps.config.baseUrl}</code>. The guide "Going to production" (docs/guides/going-to-production.md) shows the signing code.</p></section>`
}

interface DetailState {
  edit?: { label: string; scopes: string[] }
  ip_allowlist?: string
  keys?: string
}

async function detailPage(
  ctx: PageContext,
  client: ClientRecord,
  flash?: Flash,
  state: DetailState = {},
  status = 200,
): Promise<FastifyReply> {
  const active = client.status === 'active'
  const base = `${API_CLIENTS}/${client.id}`
  const edit = state.edit ?? { label: client.label, scopes: client.scopes }
  const manage: Html = !canChange(ctx)
    ? active
      ? tokenHowTo(ctx, client)
      : html`<p class="muted">This client is revoked: it can no longer be changed or get a token.</p>`
    : active
      ? html`${tokenHowTo(ctx, client)}
${addKeySection(client, base, ctx.csrf, state.keys)}
<section class="card" aria-labelledby="edit-h"><h2 id="edit-h">Label and scopes</h2>
<p class="muted">Scope changes apply to the next token; tokens already issued keep theirs until they expire.</p>
${postForm(
  base,
  ctx.csrf,
  html`${field({ name: 'label', label: 'Label', value: edit.label, required: true, maxlength: 200 })}
${checkboxGroup('scopes', 'Scopes', grantableOptions(ctx), edit.scopes)}
<button type="submit" class="primary">Save label and scopes</button>`,
  { label: 'Change label and scopes' },
)}</section>
<section class="card" aria-labelledby="allowlist-h"><h2 id="allowlist-h">IP allowlist</h2>
<p class="muted">A change applies at once, to tokens already issued too.</p>
${postForm(
  `${base}/allowlist`,
  ctx.csrf,
  html`${textareaField({ name: 'ip_allowlist', label: 'IP allowlist', value: state.ip_allowlist ?? allowlistText(client), rows: 3, mono: true, hint: ALLOWLIST_HINT, maxlength: 4000 })}
<button type="submit" class="primary">Save allowlist</button>`,
  { label: 'Change the IP allowlist' },
)}</section>
<section class="card" aria-labelledby="revoke-h"><h2 id="revoke-h">Revoke</h2>
<p>Revoking is immediate and final: every token of the client stops working and it gets no new one.</p>
<p><a href="${base}/revoke">Revoke this client…</a></p></section>`
      : html`<p class="muted">This client is revoked: it can no longer be changed or get a token.</p>`
  return ctx.render(
    {
      title: `API client: ${client.label}`,
      flash,
      body: html`${details([
        ['Client id', html`<code>${client.id}</code>`],
        ['Environment', ENV_LABEL[client.environment] ?? client.environment],
        ['Status', statusText(client)],
        ['Scopes', codes(client.scopes, 'None')],
        [
          'IP allowlist',
          client.ip_allowlist && client.ip_allowlist.length > 0
            ? html`<code>${client.ip_allowlist.join(', ')}</code>`
            : 'Any address',
        ],
        ['Created', formatTime(new Date(client.created_at))],
        ['Changed', formatTime(new Date(client.updated_at))],
      ])}
${keysTable(client, base, ctx.csrf, canChange(ctx))}
${manage}
<p><a href="${API_CLIENTS}">All API clients</a></p>`,
    },
    status,
  )
}

/** What a viewer reads at the address of a form: the form is not theirs to send. */
function readOnly(ctx: PageContext, what: string): FastifyReply {
  return ctx.render({
    title: 'API clients',
    body: html`<p>${what} needs the owner or developer role; yours only reads.</p>
<p><a href="${API_CLIENTS}">All API clients</a></p>`,
  })
}

function revokePage(
  ctx: PageContext,
  client: ClientRecord,
  flash?: Flash,
  status = 200,
): FastifyReply {
  const base = `${API_CLIENTS}/${client.id}`
  return ctx.render(
    {
      title: `Revoke ${client.label}?`,
      flash,
      body: html`<div class="card"><p>Revoke the ${ENV_LABEL[client.environment] ?? client.environment} client <strong>${client.label}</strong> (<code>${client.id}</code>)?</p>
<p>Every token it holds stops working at once, and it can get no new one. <strong>This cannot be undone</strong>: to let the integration work again, register a new client.</p>
${postForm(
  `${base}/revoke`,
  ctx.csrf,
  html`<label class="check" for="f-confirm"><input type="checkbox" id="f-confirm" name="confirm" value="yes" required> I understand that ${client.label} stops working at once, for good.</label>
<div><button type="submit" class="danger">Revoke client</button></div>`,
  { label: 'Confirm the revocation' },
)}
<p><a href="${base}">Cancel</a></p></div>`,
    },
    status,
  )
}

/** The client of the URL, of the organization and the selected environment (another's answers like a missing one). */
function clientOf(ctx: PageContext): Promise<ClientRecord> {
  return ownClient(ctx.deps, ctx.scope!, param(ctx, 'id'))
}

async function changeFailed(
  ctx: PageContext,
  id: string,
  err: unknown,
  state: DetailState,
): Promise<FastifyReply> {
  const text = refusal(err)
  if (text === null) throw err
  return detailPage(
    ctx,
    await ownClient(ctx.deps, ctx.scope!, id),
    { kind: 'error', text },
    state,
    422,
  )
}

const organizationOf = (c: ClientRecord) => c.organization_id

export const apiClientPages: ConsolePage = {
  name: 'api-clients',
  register(router) {
    router.get(API_CLIENTS, 'organization', (ctx) => listPage(ctx))

    router.get(`${API_CLIENTS}/new`, 'organization', (ctx) =>
      canChange(ctx) ? createPage(ctx) : readOnly(ctx, 'Registering a client'),
    )

    router.post(
      API_CLIENTS,
      'organization',
      async (ctx) => {
        const text = ctx.text('keys')
        const form: CreateForm = {
          label: ctx.text('label').trim(),
          keys: keptKeys(text),
          scopes: many(ctx, 'scopes'),
          ip_allowlist: ctx.text('ip_allowlist'),
        }
        const refuse = (message: string) =>
          createPage(ctx, form, { kind: 'error', text: message }, 422)
        if (form.label === '' || form.label!.length > 200) return refuse(LABEL_REFUSAL)
        const pasted = pastedKeys(text)
        if ('error' in pasted) return refuse(pasted.error)
        try {
          const client = await createClientFor(
            ctx.deps,
            ctx.scope!,
            {
              label: form.label!,
              scopes: form.scopes,
              jwks: { keys: pasted.keys },
              ip_allowlist: allowlistOf(form.ip_allowlist!),
            },
            memberGrantableScopes(),
            audited(ctx, 'client.created', (c) => c.id, organizationOf),
          )
          return ctx.redirect(`${API_CLIENTS}/${client.id}`, {
            kind: 'ok',
            text: `Client ${client.label} is registered: its id is ${client.id}. Below: how it gets a token.`,
          })
        } catch (err) {
          const message = refusal(err)
          if (message === null) throw err
          return refuse(message)
        }
      },
      { bodyLimit: 32 * 1024 },
    )

    router.get(`${API_CLIENTS}/:id`, 'organization', async (ctx) =>
      detailPage(ctx, await clientOf(ctx)),
    )

    router.post(`${API_CLIENTS}/:id`, 'organization', async (ctx) => {
      const client = await clientOf(ctx)
      const edit = { label: ctx.text('label').trim(), scopes: many(ctx, 'scopes') }
      if (edit.label === '' || edit.label.length > 200)
        return detailPage(ctx, client, { kind: 'error', text: LABEL_REFUSAL }, { edit }, 422)
      try {
        await updateClientFor(
          ctx.deps,
          ctx.scope!,
          client.id,
          { label: edit.label, scopes: edit.scopes },
          memberGrantableScopes(),
          audited(ctx, 'client.updated', (c) => c.id, organizationOf),
        )
        return ctx.redirect(`${API_CLIENTS}/${client.id}`, {
          kind: 'ok',
          text: 'The label and scopes are saved; new scopes apply to the next token.',
        })
      } catch (err) {
        return changeFailed(ctx, client.id, err, { edit })
      }
    })

    router.post(`${API_CLIENTS}/:id/allowlist`, 'organization', async (ctx) => {
      const client = await clientOf(ctx)
      const typed = ctx.text('ip_allowlist')
      const next = allowlistOf(typed)
      if (!allowlistChanged(next, client))
        return ctx.redirect(`${API_CLIENTS}/${client.id}`, {
          kind: 'info',
          text: 'The allowlist is unchanged.',
        })
      try {
        await updateClientFor(
          ctx.deps,
          ctx.scope!,
          client.id,
          { ip_allowlist: next },
          memberGrantableScopes(),
          audited(ctx, 'client.updated', (c) => c.id, organizationOf),
        )
        return ctx.redirect(`${API_CLIENTS}/${client.id}`, {
          kind: 'ok',
          text: next
            ? 'The allowlist is saved: it applies at once.'
            : 'The allowlist is lifted: any address may call.',
        })
      } catch (err) {
        return changeFailed(ctx, client.id, err, { ip_allowlist: typed })
      }
    })

    router.post(
      `${API_CLIENTS}/:id/keys`,
      'organization',
      async (ctx) => {
        const client = await clientOf(ctx)
        const text = ctx.text('keys')
        const state = { keys: keptKeys(text) }
        const next = keysAfterAdding(client, text)
        if ('error' in next)
          return detailPage(ctx, client, { kind: 'error', text: next.error }, state, 422)
        try {
          await updateClientFor(
            ctx.deps,
            ctx.scope!,
            client.id,
            { jwks: { keys: next.keys } },
            memberGrantableScopes(),
            audited(ctx, 'client.key_added', (c) => c.id, organizationOf),
          )
          return ctx.redirect(`${API_CLIENTS}/${client.id}`, {
            kind: 'ok',
            text: `Key ${next.added} is added; the client may sign with it now.`,
          })
        } catch (err) {
          return changeFailed(ctx, client.id, err, state)
        }
      },
      { bodyLimit: 32 * 1024 },
    )

    router.post(`${API_CLIENTS}/:id/keys/remove`, 'organization', async (ctx) => {
      const client = await clientOf(ctx)
      const kid = ctx.text('kid')
      const keys = keysAfterRemoving(client, kid)
      if (keys === null)
        return detailPage(
          ctx,
          client,
          { kind: 'error', text: 'The client has no key with this kid.' },
          {},
          422,
        )
      if (keys.length === 0)
        return detailPage(
          ctx,
          client,
          {
            kind: 'error',
            text: "This is the client's only key: add its replacement first, then remove this one.",
          },
          {},
          422,
        )
      try {
        await updateClientFor(
          ctx.deps,
          ctx.scope!,
          client.id,
          { jwks: { keys } },
          memberGrantableScopes(),
          audited(ctx, 'client.key_removed', (c) => c.id, organizationOf),
        )
        return ctx.redirect(`${API_CLIENTS}/${client.id}`, {
          kind: 'ok',
          text: `Key ${kid} is removed: assertions signed with it are refused from now on.`,
        })
      } catch (err) {
        return changeFailed(ctx, client.id, err, {})
      }
    })

    router.get(`${API_CLIENTS}/:id/revoke`, 'organization', async (ctx) => {
      const client = await clientOf(ctx)
      if (client.status !== 'active')
        return ctx.redirect(`${API_CLIENTS}/${client.id}`, {
          kind: 'info',
          text: 'This client is already revoked.',
        })
      if (!canChange(ctx)) return readOnly(ctx, 'Revoking a client')
      return revokePage(ctx, client)
    })

    router.post(`${API_CLIENTS}/:id/revoke`, 'organization', async (ctx) => {
      const client = await clientOf(ctx)
      if (client.status !== 'active')
        return ctx.redirect(`${API_CLIENTS}/${client.id}`, {
          kind: 'info',
          text: 'This client is already revoked.',
        })
      if (ctx.text('confirm') !== 'yes')
        return revokePage(ctx, client, { kind: 'error', text: CONFIRM_REFUSAL }, 422)
      try {
        await revokeClientFor(
          ctx.deps,
          ctx.scope!,
          client.id,
          memberGrantableScopes(),
          audited(ctx, 'client.revoked', (c) => c.id, organizationOf),
        )
      } catch (err) {
        const text = refusal(err)
        if (text === null) throw err
        return revokePage(ctx, client, { kind: 'error', text }, 422)
      }
      return ctx.redirect(`${API_CLIENTS}/${client.id}`, {
        kind: 'ok',
        text: `Client ${client.label} is revoked: its tokens no longer work.`,
      })
    })
  },
}
