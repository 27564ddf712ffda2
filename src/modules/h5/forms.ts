import { html, type Html } from '../../lib/html.js'

/** What the page's forms need: where they post, and the CSRF token and a fresh one-purchase nonce for each. */
export interface Forms {
  base: string
  csrf: string
  nonce: () => string
}

/** The hidden fields every form of the page posts: the CSRF token and a nonce of its own. */
export function hiddenFields(forms: Forms): Html {
  return html`<input type="hidden" name="csrf_token" value="${forms.csrf}"><input type="hidden" name="nonce" value="${forms.nonce()}">`
}
