import { html, type Html } from '../../lib/html.js'
import { formatMoney } from '../../lib/money-format.js'
import type { AccountView } from '../accounts/index.js'

/**
 * The balance section of the traveller page (docs/traveller-page.md): each of the cardholder's accounts with its
 * available balance, and the settled balance and pending holds behind it when they differ.
 */
function accountRow(account: AccountView): Html {
  const held =
    account.held_balance > 0
      ? html`<span class="muted">${formatMoney(account.ledger_balance, account.currency)} less ${formatMoney(account.held_balance, account.currency)} pending</span>`
      : ''
  return html`<div class="card balance" data-account-id="${account.id}">
<div><h3>${account.currency} account</h3>${account.status === 'blocked' ? html`<p class="muted">Blocked: payments from it are refused.</p>` : ''}</div>
<div class="balance-amounts"><span class="muted">Available</span><b class="available">${formatMoney(account.available_balance, account.currency)}</b>${held}</div></div>`
}

export function balanceSection(accounts: AccountView[]): Html {
  const body =
    accounts.length > 0
      ? accounts.map(accountRow)
      : html`<div class="card empty"><h3>No account yet</h3><p class="muted">Your balance will show up here once your account is open.</p></div>`
  return html`<section aria-labelledby="balance-h"><h2 id="balance-h">Your balance</h2>${body}</section>`
}

/** The section's rules, added to the page's stylesheet. */
export const BALANCE_CSS = `
.balance{display:flex;justify-content:space-between;align-items:center;gap:12px}
.balance-amounts{display:flex;flex-direction:column;align-items:flex-end;text-align:right;font-variant-numeric:tabular-nums}
.balance-amounts .available{font-size:20px}
`
