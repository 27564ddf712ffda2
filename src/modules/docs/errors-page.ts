import { ERROR_CATALOGUE } from '../../http/errors.js'
import { escapeHtml, html, lines, raw, type Html } from '../../lib/html.js'
import { OAUTH_ERROR_WHEN, OAUTH_STATUS, type OAuthErrorCode } from '../oauth/index.js'
import { page } from './html.js'

/** Escaped text whose `backticked` spans are shown as code. */
function prose(text: string): Html {
  return raw(escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>'))
}

/**
 * The error catalogue: every `code` of the `/v1` envelope with its anchor (`doc_url` points at `#<code>`), then the
 * token endpoint's OAuth `error` values (anchors `#oauth-<error>`).
 */
export function errorsPage(): string {
  const rows = Object.entries(ERROR_CATALOGUE).map(
    ([code, spec]) => html`<tr id="${code}">
<td><a href="#${code}"><code>${code}</code></a></td><td data-label="status">${spec.status}</td><td data-label="type"><code>${spec.type}</code></td>
<td data-label="retryable">${spec.retryable ? 'yes' : 'no'}</td><td>${prose(spec.description)}</td></tr>`,
  )
  const oauthRows = (Object.entries(OAUTH_STATUS) as [OAuthErrorCode, number][]).map(
    ([error, status]) => html`<tr id="oauth-${error}">
<td><a href="#oauth-${error}"><code>${error}</code></a></td><td data-label="status">${status}</td><td>${prose(OAUTH_ERROR_WHEN[error])}</td></tr>`,
  )
  return page(
    'svc API errors',
    html`<h1>API errors</h1>
<p>Every <code>/v1</code> error answers <code>{"error": {type, code, message, param, doc_url, request_id}}</code>.
Branch on <code>code</code>; <code>message</code> is for people and may change. When several fields fail, <code>code</code> is
<code>invalid_parameter</code> and <code>errors</code> lists <code>{code, param, message}</code> per field.
The token endpoint answers the flat OAuth shape instead: see <a href="#token-endpoint">Token endpoint errors</a>.</p>
<div class="table-scroll" tabindex="0" role="region" aria-label="Error codes"><table class="stack"><thead><tr><th scope="col">code</th><th scope="col">status</th><th scope="col">type</th><th scope="col">retryable</th><th scope="col">meaning</th></tr></thead><tbody>${lines(rows)}</tbody></table></div>
<h2 id="token-endpoint">Token endpoint errors</h2>
<p><code>POST /oauth/token</code> refuses in the flat RFC 6749 shape <code>{"error", "error_description"}</code>, always with
<code>Cache-Control: no-store</code>: no <code>code</code>, no <code>doc_url</code>. Branch on <code>error</code>; the description says
what to change once the assertion's signature is proven (docs/auth.md, "Token endpoint errors").</p>
<div class="table-scroll" tabindex="0" role="region" aria-label="Token endpoint errors"><table class="stack"><thead><tr><th scope="col">error</th><th scope="col">status</th><th scope="col">when</th></tr></thead><tbody>${lines(oauthRows)}</tbody></table></div>`,
    { current: '/docs/errors' },
  )
}
