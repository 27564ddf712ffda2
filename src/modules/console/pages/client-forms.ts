import { MAX_CLIENT_KEYS, type ClientRecord } from '../../oauth/index.js'
import { postForm, table, textareaField } from '../components.js'
import { html, type Html } from '../../../lib/html.js'
import {
  holdsPrivateKey,
  KeyInputError,
  parsePastedKeys,
  PRIVATE_KEY_REFUSAL,
  withKids,
  type Jwk,
} from '../keys.js'
import { items } from './operator-shared.js'

/**
 * What the two API client pages share (the operator's, for any organization, and the organization's own): reading
 * pasted keys, the keys table, the "add a key" form, the allowlist field. The rules themselves are the oauth module's.
 */

export const KEYS_HINT = `A JWK Set ({"keys": [...]}) or PEM public keys (-----BEGIN PUBLIC KEY-----): EC P-256 or RSA of 2048 bits or more, at most ${MAX_CLIENT_KEYS}. Public keys only: a private key is refused. A key without a kid gets its JWK thumbprint as kid.`
export const ALLOWLIST_HINT =
  "IP addresses or CIDR ranges, one a line. Empty: any address (the organization's network policy still applies)."
export const LABEL_REFUSAL = 'Give the client a label of 1 to 200 characters.'

/** Pasted key text is shown back on a refused form only when it holds no private key material. */
export function keptKeys(text: string): string {
  return holdsPrivateKey(text) ? '' : text
}

/** A key's type as people read it: "EC P-256", "RSA 2048 bits". */
export function keyDescription(k: Jwk): string {
  if (k.kty === 'EC') return `EC ${String(k.crv ?? '')}`
  if (k.kty === 'RSA' && typeof k.n === 'string')
    return `RSA ${Buffer.from(k.n, 'base64url').length * 8} bits`
  return String(k.kty)
}

/** The algorithm a key signs with: its `alg`, or the one its type implies. */
export function keyAlgorithm(k: Jwk): string {
  if (typeof k.alg === 'string') return k.alg
  return k.kty === 'EC' ? 'ES256' : k.kty === 'RSA' ? 'RS256' : ''
}

/** The keys to send: the pasted ones read into JWKs (a kid on each), or the refusal to show. */
export function pastedKeys(text: string): { keys: Jwk[] } | { error: string } {
  if (holdsPrivateKey(text)) return { error: PRIVATE_KEY_REFUSAL }
  try {
    return { keys: parsePastedKeys(text) }
  } catch (err) {
    if (err instanceof KeyInputError) return { error: err.message }
    throw err
  }
}

/** The client's keys with the pasted ones added beside them (the keys it has keep working), or the refusal to show. */
export function keysAfterAdding(
  client: ClientRecord,
  text: string,
): { keys: Jwk[]; added: string } | { error: string } {
  const pasted = pastedKeys(text)
  if ('error' in pasted) return pasted
  return {
    keys: withKids([...(client.jwks.keys as Jwk[]), ...pasted.keys]),
    added: pasted.keys.map((k) => k.kid).join(', '),
  }
}

/** The client's keys without the one of `kid`, or null when it has none of that kid. */
export function keysAfterRemoving(client: ClientRecord, kid: string): Jwk[] | null {
  const keys = (client.jwks.keys as Jwk[]).filter((k) => k.kid !== kid)
  return kid === '' || keys.length === client.jwks.keys.length ? null : keys
}

/** The allowlist typed in the form: null (any address) when empty. */
export function allowlistOf(text: string): string[] | null {
  const list = items(text)
  return list.length > 0 ? list : null
}

/** Whether the typed allowlist differs from the client's (only a change is sent: it drops cached tokens). */
export function allowlistChanged(next: string[] | null, client: ClientRecord): boolean {
  const current = client.ip_allowlist && client.ip_allowlist.length > 0 ? client.ip_allowlist : null
  return JSON.stringify(next) !== JSON.stringify(current)
}

/** The client's allowlist for its edit field: one entry a line. */
export function allowlistText(client: ClientRecord): string {
  return (client.ip_allowlist ?? []).join('\n')
}

/** The client's keys: kid, type, algorithm, and a Remove button each while it is active and has more than one. */
export function keysTable(client: ClientRecord, base: string, csrf: string, changes = true): Html {
  const keys = client.jwks.keys as Jwk[]
  const removable = changes && client.status === 'active' && keys.length > 1
  return table({
    caption: `Public keys (${keys.length} of at most ${MAX_CLIENT_KEYS})`,
    rows: keys,
    empty: 'No key.',
    columns: [
      {
        header: 'Key id (kid)',
        cell: (k) =>
          typeof k.kid === 'string'
            ? html`<code>${k.kid}</code>`
            : html`<span class="muted">none</span>`,
      },
      { header: 'Type', cell: (k) => keyDescription(k) },
      { header: 'Algorithm', cell: (k) => keyAlgorithm(k) },
      ...(removable
        ? [
            {
              header: 'Remove',
              cell: (k: Jwk) =>
                typeof k.kid === 'string'
                  ? postForm(
                      `${base}/keys/remove`,
                      csrf,
                      html`<input type="hidden" name="kid" value="${k.kid}"><button type="submit" class="danger" aria-label="Remove key ${k.kid}">Remove</button>`,
                      { class: 'inline' },
                    )
                  : '',
            },
          ]
        : []),
    ],
  })
}

/** The "Add a key" section of an active client (or why no key can be added). */
export function addKeySection(
  client: ClientRecord,
  base: string,
  csrf: string,
  kept?: string,
): Html {
  return html`<section class="card" aria-labelledby="add-key-h"><h2 id="add-key-h">Add a key</h2>
${
  client.jwks.keys.length >= MAX_CLIENT_KEYS
    ? html`<p>The client has ${MAX_CLIENT_KEYS} keys, the most it can hold: remove one before adding another.</p>`
    : html`<p class="muted">To rotate: add the new key, let the client sign with it, then remove the old one.</p>
${postForm(
  `${base}/keys`,
  csrf,
  html`${textareaField({ name: 'keys', id: 'add-keys', label: 'Public key to add', value: kept, rows: 6, required: true, mono: true, hint: KEYS_HINT, maxlength: 12_000 })}
<button type="submit" class="primary">Add key</button>`,
  { label: 'Add a key' },
)}`
}</section>`
}
