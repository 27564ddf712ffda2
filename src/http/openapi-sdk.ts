/**
 * The `@svc/sdk` method that calls each operation, for the SDK code sample of the reference (`x-codeSamples`).
 *
 * Every `/v1` operation (and `POST /oauth/token`) has an entry, keyed `METHOD /path` as in /openapi.json:
 * - `'cards.freeze'`: the method of a `Svc` instance (`svc.cards.freeze`). The sample passes the path's ids in order,
 *   then the request example (or, for a list, `{ limit: 10 }` and the required query), as every resource method does;
 * - `{ method, source }`: the method, with a sample written by hand where that shape does not fit;
 * - `null`: the SDK has no method for it; the sample goes through `svc.core.request`.
 *
 * test/platform/openapi-examples.test.ts fails for a `/v1` operation without an entry, for an entry whose operation is
 * gone, and for a method `Svc` does not have; it runs every sample against a recording transport and checks that
 * it sends the operation's method, path and body. Operator and platform operations have curl samples only.
 */
export type SdkEntry = string | { method: string; source: string } | null

export const SDK_METHODS: Readonly<Record<string, SdkEntry>> = {
  'POST /oauth/token': {
    method: 'core.accessToken',
    source: [
      '// new Svc({ clientId, privateKey, baseUrl }) signs the assertion, calls POST /oauth/token',
      '// and reuses the token until 60 s before it expires; every call below does this itself.',
      'const accessToken = await svc.core.accessToken()',
    ].join('\n'),
  },
  'GET /v1/programs': 'programs.list',
  'GET /v1/fx_rates': {
    method: 'fxRates.retrieve',
    source: "const rate = await svc.fxRates.retrieve({ base: 'USD', quote: 'EUR' })",
  },
  'PUT /v1/simulate/fx_rates/{base}/{quote}': {
    method: 'simulate.fxRates.pin',
    source: "const rate = await svc.simulate.fxRates.pin('USD', 'EUR', { rate: '1.0825' })",
  },

  'POST /v1/oauth_clients': 'oauthClients.create',
  'GET /v1/oauth_clients': 'oauthClients.list',
  'GET /v1/oauth_clients/{oauth_client_id}': 'oauthClients.retrieve',
  'PATCH /v1/oauth_clients/{oauth_client_id}': 'oauthClients.update',
  'POST /v1/oauth_clients/{oauth_client_id}/revoke': 'oauthClients.revoke',

  'GET /v1/events': 'events.list',
  'GET /v1/events/stream': {
    method: 'events.stream',
    source:
      "for await (const event of svc.events.stream({ types: ['card.*'] })) console.log(event.type, event.id)",
  },
  'GET /v1/events/{event_id}': 'events.retrieve',
  'GET /v1/events/{event_id}/deliveries': 'events.listDeliveries',
  'POST /v1/events/{event_id}/replay': 'events.replay',

  'POST /v1/webhook_endpoints': 'webhookEndpoints.create',
  'GET /v1/webhook_endpoints': 'webhookEndpoints.list',
  'GET /v1/webhook_endpoints/{webhook_endpoint_id}': 'webhookEndpoints.retrieve',
  'PATCH /v1/webhook_endpoints/{webhook_endpoint_id}': 'webhookEndpoints.update',
  'DELETE /v1/webhook_endpoints/{webhook_endpoint_id}': 'webhookEndpoints.del',
  'POST /v1/webhook_endpoints/{webhook_endpoint_id}/rotate_secret': 'webhookEndpoints.rotateSecret',
  'GET /v1/webhook_endpoints/{webhook_endpoint_id}/deliveries': 'webhookEndpoints.listDeliveries',
  'POST /v1/webhook_endpoints/{webhook_endpoint_id}/replay': 'webhookEndpoints.replay',
  'POST /v1/webhook_endpoints/{webhook_endpoint_id}/test': 'webhookEndpoints.sendTest',

  'POST /v1/cardholders': 'cardholders.create',
  'GET /v1/cardholders': 'cardholders.list',
  'GET /v1/cardholders/{cardholder_id}': 'cardholders.retrieve',
  'PATCH /v1/cardholders/{cardholder_id}': 'cardholders.update',
  'GET /v1/cardholders/{cardholder_id}/cards': 'cardholders.listCards',
  'POST /v1/cardholders/{cardholder_id}/kyc': 'kyc.create',
  'GET /v1/cardholders/{cardholder_id}/kyc': 'kyc.list',

  'POST /v1/accounts': 'accounts.create',
  'GET /v1/accounts': 'accounts.list',
  'GET /v1/accounts/{account_id}': 'accounts.retrieve',
  'GET /v1/accounts/{account_id}/cards': 'accounts.listCards',
  'POST /v1/accounts/{account_id}/block': 'accounts.block',
  'POST /v1/accounts/{account_id}/unblock': 'accounts.unblock',
  'POST /v1/accounts/{account_id}/credit': 'accounts.credit',
  'POST /v1/accounts/{account_id}/debit': 'accounts.debit',
  'GET /v1/accounts/{account_id}/entries': 'accounts.listEntries',
  'POST /v1/simulate/processor_faults': 'simulate.processorFaults.create',

  'GET /v1/esim/packages': 'esim.packages.list',
  'GET /v1/esim/packages/{package_id}': 'esim.packages.retrieve',
  'POST /v1/esim/orders': 'esim.orders.create',
  'GET /v1/esim/orders': 'esim.orders.list',
  'GET /v1/esim/orders/{order_id}': 'esim.orders.retrieve',
  'GET /v1/esim/esims': 'esim.esims.list',
  'GET /v1/esim/esims/{esim_id}': 'esim.esims.retrieve',
  'GET /v1/esim/esims/{esim_id}/top_ups': 'esim.topUps.list',
  'POST /v1/esim/esims/{esim_id}/top_ups': 'esim.topUps.create',
  'POST /v1/esim/h5_links': 'esim.h5Links.create',
  'POST /v1/simulate/esim/provisioning': 'simulate.esim.provisioning',
  'POST /v1/simulate/esim/orders/{order_id}/settle': 'simulate.esim.settleOrder',
  'POST /v1/simulate/esim/packages/{package_id}/status': 'simulate.esim.packageStatus',
  'POST /v1/simulate/esim/esims/{esim_id}/usage': 'simulate.esim.usage',
  'POST /v1/simulate/esim/usage_reports': 'simulate.esim.usageReports',
  'POST /v1/simulate/esim/esims/{esim_id}/install': 'simulate.esim.install',
  'POST /v1/simulate/esim/esims/{esim_id}/location': 'simulate.esim.location',
  'GET /v1/esim/alert_settings': 'esim.alertSettings.retrieve',
  'PUT /v1/esim/alert_settings': 'esim.alertSettings.update',
  'PATCH /v1/esim/esims/{esim_id}': 'esim.esims.update',
  'POST /v1/esim/esims/{esim_id}/cancel': 'esim.esims.cancel',
  'POST /v1/esim/esims/{esim_id}/suspend': 'esim.esims.suspend',
  'POST /v1/esim/esims/{esim_id}/resume': 'esim.esims.resume',
  'POST /v1/cards/{card_id}/reveal_sessions': 'cards.createRevealSession',

  'POST /v1/cards': 'cards.create',
  'GET /v1/cards': 'cards.list',
  'GET /v1/cards/{card_id}': 'cards.retrieve',
  'PATCH /v1/cards/{card_id}': 'cards.update',
  'POST /v1/cards/{card_id}/activate': 'cards.activate',
  'POST /v1/cards/{card_id}/freeze': 'cards.freeze',
  'POST /v1/cards/{card_id}/unfreeze': 'cards.unfreeze',
  'POST /v1/cards/{card_id}/close': 'cards.close',
  'POST /v1/cards/{card_id}/replace': 'cards.replace',
  'POST /v1/cards/{card_id}/pin-key': 'cards.createPinKey',
  'POST /v1/cards/{card_id}/pin': 'cards.setPin',
  'POST /v1/cards/{card_id}/pin/verify': 'cards.verifyPin',
  'POST /v1/cards/{card_id}/details': 'cards.retrieveDetails',
  'GET /v1/cards/{card_id}/spend_limits': 'cards.spendLimits',
  'POST /v1/simulate/cards/{card_id}/issue': 'simulate.cards.issue',
  'POST /v1/simulate/cards/{card_id}/ship': 'simulate.cards.ship',

  'GET /v1/authorizations': 'authorizations.list',
  'GET /v1/authorizations/{authorization_id}': 'authorizations.retrieve',
  'POST /v1/simulate/authorizations': 'simulate.authorizations.create',
  'POST /v1/simulate/authorizations/{authorization_id}/increment':
    'simulate.authorizations.increment',
  'POST /v1/simulate/authorizations/{authorization_id}/reverse': 'simulate.authorizations.reverse',
  'POST /v1/simulate/authorizations/{authorization_id}/capture': 'simulate.authorizations.capture',
  'POST /v1/simulate/authorizations/{authorization_id}/expire': 'simulate.authorizations.expire',

  'PUT /v1/authorization_endpoint': 'authorizationEndpoint.update',
  'GET /v1/authorization_endpoint': 'authorizationEndpoint.retrieve',
  'DELETE /v1/authorization_endpoint': 'authorizationEndpoint.del',
  'POST /v1/authorization_endpoint/rotate_secret': 'authorizationEndpoint.rotateSecret',
  'GET /v1/authorization_endpoint/attempts': 'authorizationEndpoint.listAttempts',

  'POST /v1/authorization_rules': 'authorizationRules.create',
  'GET /v1/authorization_rules': 'authorizationRules.list',
  'GET /v1/authorization_rules/{authorization_rule_id}': 'authorizationRules.retrieve',
  'PATCH /v1/authorization_rules/{authorization_rule_id}': 'authorizationRules.update',
  'DELETE /v1/authorization_rules/{authorization_rule_id}': 'authorizationRules.del',
  'POST /v1/authorization_rules/{authorization_rule_id}/backtests':
    'authorizationRules.createBacktest',
  'GET /v1/authorization_rules/{authorization_rule_id}/backtests':
    'authorizationRules.listBacktests',
  'GET /v1/authorization_rules/{authorization_rule_id}/backtests/{backtest_id}':
    'authorizationRules.retrieveBacktest',

  'GET /v1/transactions': 'transactions.list',
  'GET /v1/transactions/{transaction_id}': 'transactions.retrieve',
  'POST /v1/transactions/{transaction_id}/refund': 'transactions.refund',
  'POST /v1/simulate/transactions/{transaction_id}/settle': 'simulate.transactions.settle',
  'POST /v1/simulate/refunds': 'simulate.refunds.create',

  'GET /v1/network_tokens': 'networkTokens.list',
  'GET /v1/network_tokens/{network_token_id}': 'networkTokens.retrieve',
  'POST /v1/network_tokens/{network_token_id}/suspend': 'networkTokens.suspend',
  'POST /v1/network_tokens/{network_token_id}/resume': 'networkTokens.resume',
  'POST /v1/network_tokens/{network_token_id}/delete': 'networkTokens.del',
  'POST /v1/simulate/network_tokens': 'simulate.networkTokens.create',
  'POST /v1/simulate/network_tokens/{network_token_id}/activate': 'simulate.networkTokens.activate',

  'GET /v1/authentications': 'authentications.list',
  'GET /v1/authentications/{authentication_id}': 'authentications.retrieve',
  'POST /v1/authentications/{authentication_id}/approve': 'authentications.approve',
  'POST /v1/authentications/{authentication_id}/decline': 'authentications.decline',
  'POST /v1/simulate/authentications': 'simulate.authentications.create',

  'POST /v1/disputes': 'disputes.create',
  'GET /v1/disputes': 'disputes.list',
  'GET /v1/disputes/{dispute_id}': 'disputes.retrieve',
  'POST /v1/disputes/{dispute_id}/withdraw': 'disputes.withdraw',
  'POST /v1/simulate/disputes/{dispute_id}/resolve': 'simulate.disputes.resolve',

  'POST /v1/simulate/clocks': 'simulate.clocks.create',
  'GET /v1/simulate/clocks': 'simulate.clocks.list',
  'GET /v1/simulate/clocks/{clock_id}': 'simulate.clocks.retrieve',
  'POST /v1/simulate/clocks/{clock_id}/advance': 'simulate.clocks.advance',
  'DELETE /v1/simulate/clocks/{clock_id}': 'simulate.clocks.del',

  'POST /v1/reports': 'reports.create',
  'GET /v1/reports': 'reports.list',
  'GET /v1/reports/{report_id}': 'reports.retrieve',
  'GET /v1/reports/{report_id}/download': 'reports.download',
}

/** Operations that need an entry: every `/v1` one, and the token endpoint. */
export function needsSdkEntry(path: string): boolean {
  return path.startsWith('/v1/') || path === '/oauth/token'
}
