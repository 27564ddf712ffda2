import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { newKeyPair, OPERATOR_TOKEN, startTestApp, type TestApp } from '../helpers/app.js'
import { tokenFor } from './support.js'

let t: TestApp
let orgId: string

before(async () => {
  t = await startTestApp()
  orgId = (await t.operator('POST', '/operator/v1/organizations', { name: 'Acme' })).id
})
after(() => t.close())

/** An operator call that may fail, with the operator token unless another is given. */
function op(
  method: string,
  url: string,
  body?: unknown,
  authorization: string | null = `Bearer ${OPERATOR_TOKEN}`,
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: method as never,
    url,
    headers: authorization ? { authorization } : {},
    ...(body !== undefined ? { payload: body as never } : {}),
  })
}

function assertError(
  res: LightMyRequestResponse,
  status: number,
  code: string,
  param?: string,
): void {
  assert.equal(res.statusCode, status, res.body)
  const { error } = res.json()
  assert.equal(error.code, code)
  assert.match(error.request_id, /^req_/)
  if (param !== undefined) assert.equal(error.param, param)
}

function rsaPublicJwk(bits: number, kid?: string): Record<string, unknown> {
  const { publicKey } = generateKeyPairSync('rsa', { modulusLength: bits })
  return { ...publicKey.export({ format: 'jwk' }), ...(kid ? { kid } : {}) }
}

function ecPublicJwk(curve: string, kid?: string): Record<string, unknown> {
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: curve })
  return { ...publicKey.export({ format: 'jwk' }), ...(kid ? { kid } : {}) }
}

const clientBody = (jwks: unknown, extra: Record<string, unknown> = {}) => ({
  organization_id: orgId,
  environment: 'sandbox',
  label: 'backend',
  scopes: ['cardholders:read'],
  jwks,
  ...extra,
})

describe('operator authentication', () => {
  test('no Authorization header answers 401 missing_credentials in the envelope', async () => {
    assertError(
      await op('GET', `/operator/v1/organizations/${orgId}`, undefined, null),
      401,
      'missing_credentials',
    )
  })

  test('a wrong operator token answers 401 invalid_access_token', async () => {
    assertError(
      await op('POST', '/operator/v1/organizations', { name: 'x' }, 'Bearer op_wrong'),
      401,
      'invalid_access_token',
    )
    assertError(
      await op('GET', `/operator/v1/organizations/${orgId}`, undefined, `Basic ${OPERATOR_TOKEN}`),
      401,
      'invalid_access_token',
    )
  })

  test('a percent-encoded operator path still requires the operator token', async () => {
    for (const url of [
      '/%6Fperator/v1/organizations',
      '/operator/v1/%6Frganizations',
      `/%6f%70erator/v1/organizations/${orgId}`,
    ]) {
      assertError(await op('GET', url, undefined, null), 401, 'missing_credentials')
    }
    assertError(
      await op('POST', '/%6Fperator/v1/organizations', { name: 'sneaky' }, null),
      401,
      'missing_credentials',
    )
  })

  test('an API access token is not an operator token', async () => {
    const keys = await newKeyPair()
    const client = await t.operator(
      'POST',
      '/operator/v1/clients',
      clientBody({ keys: [keys.publicJwk] }),
    )
    const token = (await tokenFor(t, { clientId: client.id, privateJwk: keys.privateJwk })).json()
      .access_token
    assertError(
      await op('GET', `/operator/v1/organizations/${orgId}`, undefined, `Bearer ${token}`),
      401,
      'invalid_access_token',
    )
  })
})

describe('organizations and network policies', () => {
  test('POST /operator/v1/organizations answers 201 with an org_ id', async () => {
    const res = await op('POST', '/operator/v1/organizations', { name: 'Globex' })
    assert.equal(res.statusCode, 201)
    const org = res.json()
    assert.equal(org.object, 'organization')
    assert.match(org.id, /^org_[0-9A-Z]{26}$/)
    assert.equal(org.name, 'Globex')
  })

  test('an unknown field or a missing name is refused', async () => {
    assertError(
      await op('POST', '/operator/v1/organizations', { name: 'x', plan: 'gold' }),
      400,
      'unknown_parameter',
      'plan',
    )
    assertError(
      await op('POST', '/operator/v1/organizations', {}),
      400,
      'missing_parameter',
      'name',
    )
  })

  test('PUT network_policy stores the list for one environment', async () => {
    const res = await op('PUT', `/operator/v1/organizations/${orgId}/network_policy`, {
      environment: 'production',
      ip_allowlist: ['203.0.113.0/24', '2001:db8::/48', '198.51.100.9'],
    })
    assert.equal(res.statusCode, 200)
    assert.deepEqual(res.json(), {
      object: 'network_policy',
      organization_id: orgId,
      environment: 'production',
      ip_allowlist: ['203.0.113.0/24', '2001:db8::/48', '198.51.100.9'],
    })
    const cleared = await op('PUT', `/operator/v1/organizations/${orgId}/network_policy`, {
      environment: 'production',
      ip_allowlist: [],
    })
    assert.deepEqual(cleared.json().ip_allowlist, [])
  })

  test('PUT network_policy refuses a malformed range, an unknown environment and an unknown organization', async () => {
    assertError(
      await op('PUT', `/operator/v1/organizations/${orgId}/network_policy`, {
        environment: 'sandbox',
        ip_allowlist: ['10.0.0.0/33'],
      }),
      400,
      'invalid_parameter',
      'ip_allowlist[0]',
    )
    assertError(
      await op('PUT', `/operator/v1/organizations/${orgId}/network_policy`, {
        environment: 'sandbox',
        ip_allowlist: ['1.2.3.4', 'example.com'],
      }),
      400,
      'invalid_parameter',
      'ip_allowlist[1]',
    )
    assertError(
      await op('PUT', `/operator/v1/organizations/${orgId}/network_policy`, {
        environment: 'staging',
        ip_allowlist: [],
      }),
      400,
      'invalid_parameter',
      'environment',
    )
    assertError(
      await op('PUT', '/operator/v1/organizations/org_00000000000000000000000000/network_policy', {
        environment: 'sandbox',
        ip_allowlist: [],
      }),
      404,
      'organization_not_found',
    )
  })
})

describe('programs', () => {
  test('a sim_full program inherits every capability and both form factors', async () => {
    const res = await op('POST', '/operator/v1/programs', {
      organization_id: orgId,
      environment: 'sandbox',
      name: 'Full',
      processor: 'sim_full',
      currencies: ['usd', 'EUR'],
    })
    assert.equal(res.statusCode, 201, res.body)
    const p = res.json()
    assert.equal(p.object, 'program')
    assert.match(p.id, /^prog_/)
    assert.deepEqual(p.currencies, ['USD', 'EUR'])
    assert.deepEqual(p.form_factors, ['virtual', 'physical'])
    for (const c of ['account_credit', 'account_debit', 'account_status', 'card_pin'])
      assert.ok(p.capabilities.includes(c), c)
    assert.equal(p.one_card_per_cardholder, false)
    assert.equal(p.identity_evidence_required, false)
  })

  test('a sim_basic program carries the basic processor traits', async () => {
    const p = (
      await op('POST', '/operator/v1/programs', {
        organization_id: orgId,
        environment: 'production',
        name: 'Basic',
        processor: 'sim_basic',
        currencies: ['USD'],
      })
    ).json()
    assert.equal(p.environment, 'production')
    assert.deepEqual(p.form_factors, ['virtual'])
    for (const c of ['account_credit', 'account_debit', 'account_status', 'card_pin'])
      assert.ok(!p.capabilities.includes(c), c)
    assert.equal(p.one_card_per_cardholder, true)
    assert.equal(p.identity_evidence_required, true)
    assert.equal(p.address_change_requires_kyc, true)
  })

  test('a form factor the processor cannot issue, an unknown processor or organization is refused', async () => {
    const base = { organization_id: orgId, environment: 'sandbox', name: 'X', currencies: ['USD'] }
    assertError(
      await op('POST', '/operator/v1/programs', {
        ...base,
        processor: 'sim_basic',
        form_factors: ['physical'],
      }),
      400,
      'invalid_parameter',
      'form_factors',
    )
    assertError(
      await op('POST', '/operator/v1/programs', { ...base, processor: 'acme_bank' }),
      400,
      'invalid_parameter',
      'processor',
    )
    assertError(
      await op('POST', '/operator/v1/programs', {
        ...base,
        processor: 'sim_full',
        organization_id: 'org_00000000000000000000000000',
      }),
      404,
      'organization_not_found',
    )
  })
})

describe('JWK Set validation', () => {
  test('a key carrying private members (d, p, q) is refused and nothing is stored', async () => {
    const { privateJwk } = await newKeyPair('ES256')
    assertError(
      await op('POST', '/operator/v1/clients', clientBody({ keys: [privateJwk] })),
      400,
      'invalid_parameter',
      'jwks.keys[0]',
    )
    const rsa = (await newKeyPair('RS256')).privateJwk
    const res = await op('POST', '/operator/v1/clients', clientBody({ keys: [rsa] }))
    assertError(res, 400, 'invalid_parameter', 'jwks.keys[0]')
    assert.match(res.json().error.message, /\bd\b.*\bp\b.*\bq\b/)
    const listed = (await t.operator('GET', `/operator/v1/clients?organization_id=${orgId}`)).data
    assert.ok(listed.every((c: any) => c.jwks.keys.every((k: any) => !('d' in k))))
  })

  test('a symmetric (oct) key is refused', async () => {
    assertError(
      await op(
        'POST',
        '/operator/v1/clients',
        clientBody({ keys: [{ kty: 'oct', k: 'c2VjcmV0' }] }),
      ),
      400,
      'invalid_parameter',
      'jwks.keys[0]',
    )
  })

  test('four keys are refused; three are accepted', async () => {
    const keys = await Promise.all(
      ['a', 'b', 'c', 'd'].map(async (kid) => (await newKeyPair('ES256', kid)).publicJwk),
    )
    assertError(
      await op('POST', '/operator/v1/clients', clientBody({ keys })),
      400,
      'invalid_parameter',
      'jwks.keys',
    )
    assert.equal(
      (await op('POST', '/operator/v1/clients', clientBody({ keys: keys.slice(0, 3) }))).statusCode,
      201,
    )
  })

  test('several keys without a kid on each are refused; a single key may omit it', async () => {
    const withKid = (await newKeyPair('ES256', 'one')).publicJwk
    const noKid = ecPublicJwk('prime256v1')
    assertError(
      await op('POST', '/operator/v1/clients', clientBody({ keys: [withKid, noKid] })),
      400,
      'invalid_parameter',
      'jwks.keys[1].kid',
    )
    assert.equal(
      (await op('POST', '/operator/v1/clients', clientBody({ keys: [noKid] }))).statusCode,
      201,
    )
  })

  test('two keys with the same kid are refused', async () => {
    const a = (await newKeyPair('ES256', 'same')).publicJwk
    const b = (await newKeyPair('ES256', 'same')).publicJwk
    assertError(
      await op('POST', '/operator/v1/clients', clientBody({ keys: [a, b] })),
      400,
      'invalid_parameter',
      'jwks.keys[1].kid',
    )
  })

  test('an RSA key under 2048 bits answers invalid_public_key; 2048 bits is accepted', async () => {
    assertError(
      await op('POST', '/operator/v1/clients', clientBody({ keys: [rsaPublicJwk(1024)] })),
      400,
      'invalid_public_key',
      'jwks.keys[0]',
    )
    assert.equal(
      (await op('POST', '/operator/v1/clients', clientBody({ keys: [rsaPublicJwk(2048)] })))
        .statusCode,
      201,
    )
  })

  test('an EC key on a curve other than P-256 is refused', async () => {
    assertError(
      await op('POST', '/operator/v1/clients', clientBody({ keys: [ecPublicJwk('secp384r1')] })),
      400,
      'invalid_parameter',
      'jwks.keys[0].crv',
    )
    assertError(
      await op('POST', '/operator/v1/clients', clientBody({ keys: [ecPublicJwk('secp256k1')] })),
      400,
      'invalid_parameter',
      'jwks.keys[0].crv',
    )
  })

  test('a broken key, an empty set and a set that is not a JWK Set are refused', async () => {
    const broken = { ...ecPublicJwk('prime256v1'), x: 'AAAA' }
    assertError(
      await op('POST', '/operator/v1/clients', clientBody({ keys: [broken] })),
      400,
      'invalid_public_key',
      'jwks.keys[0]',
    )
    assertError(
      await op('POST', '/operator/v1/clients', clientBody({ keys: [] })),
      400,
      'invalid_parameter',
      'jwks.keys',
    )
    assert.equal(
      (await op('POST', '/operator/v1/clients', clientBody([ecPublicJwk('prime256v1')])))
        .statusCode,
      400,
    )
  })

  test('a key declared for encryption or for another algorithm is refused', async () => {
    assertError(
      await op(
        'POST',
        '/operator/v1/clients',
        clientBody({ keys: [{ ...ecPublicJwk('prime256v1'), use: 'enc' }] }),
      ),
      400,
      'invalid_parameter',
      'jwks.keys[0].use',
    )
    assertError(
      await op(
        'POST',
        '/operator/v1/clients',
        clientBody({ keys: [{ ...rsaPublicJwk(2048), alg: 'PS256' }] }),
      ),
      400,
      'invalid_parameter',
      'jwks.keys[0].alg',
    )
  })
})

describe('client lifecycle', () => {
  test('create, get, list, patch and revoke a client', async () => {
    const keys = await newKeyPair('ES256', 'k1')
    const created = await op(
      'POST',
      '/operator/v1/clients',
      clientBody(
        { keys: [{ ...keys.publicJwk, x5c: ['ignored'] }] },
        { ip_allowlist: ['203.0.113.0/24'] },
      ),
    )
    assert.equal(created.statusCode, 201, created.body)
    const client = created.json()
    assert.equal(client.object, 'oauth_client')
    assert.match(client.id, /^oc_[0-9A-Z]{26}$/)
    assert.equal(client.organization_id, orgId)
    assert.equal(client.environment, 'sandbox')
    assert.equal(client.label, 'backend')
    assert.deepEqual(client.scopes, ['cardholders:read'])
    assert.deepEqual(client.ip_allowlist, ['203.0.113.0/24'])
    assert.equal(client.status, 'active')
    assert.equal(client.revoked_at, null)
    assert.deepEqual(Object.keys(client.jwks.keys[0]).sort(), [
      'alg',
      'crv',
      'kid',
      'kty',
      'x',
      'y',
    ])

    assert.deepEqual((await t.operator('GET', `/operator/v1/clients/${client.id}`)).id, client.id)
    const list = await t.operator('GET', `/operator/v1/clients?organization_id=${orgId}`)
    assert.equal(list.object, 'list')
    assert.ok(list.data.some((c: any) => c.id === client.id))

    const patched = await t.operator('PATCH', `/operator/v1/clients/${client.id}`, {
      label: 'renamed',
      scopes: ['cardholders:read', 'accounts:write'],
      ip_allowlist: null,
    })
    assert.equal(patched.label, 'renamed')
    assert.deepEqual(patched.scopes, ['cardholders:read', 'accounts:write'])
    assert.equal(patched.ip_allowlist, null)

    const revoked = await t.operator('POST', `/operator/v1/clients/${client.id}/revoke`)
    assert.equal(revoked.status, 'revoked')
    assert.match(revoked.revoked_at, /Z$/)
  })

  test('an unknown scope is refused at creation and on patch', async () => {
    const keys = await newKeyPair()
    assertError(
      await op(
        'POST',
        '/operator/v1/clients',
        clientBody({ keys: [keys.publicJwk] }, { scopes: ['cardholders:read', 'admin'] }),
      ),
      400,
      'invalid_parameter',
      'scopes[1]',
    )
    const client = await t.operator(
      'POST',
      '/operator/v1/clients',
      clientBody({ keys: [keys.publicJwk] }),
    )
    assertError(
      await op('PATCH', `/operator/v1/clients/${client.id}`, { scopes: ['root'] }),
      400,
      'invalid_parameter',
      'scopes[0]',
    )
  })

  test('scopes default to everything except cards:secrets', async () => {
    const keys = await newKeyPair()
    const body: Record<string, unknown> = clientBody({ keys: [keys.publicJwk] })
    delete body.scopes
    const client = (await op('POST', '/operator/v1/clients', body)).json()
    assert.ok(client.scopes.includes('cardholders:write'))
    assert.ok(!client.scopes.includes('cards:secrets'))
  })

  test('unknown client and organization answer 404', async () => {
    assertError(
      await op('GET', '/operator/v1/clients/oc_00000000000000000000000000'),
      404,
      'client_not_found',
    )
    assertError(
      await op('POST', '/operator/v1/clients/oc_00000000000000000000000000/revoke'),
      404,
      'client_not_found',
    )
    assertError(
      await op('PATCH', '/operator/v1/clients/oc_00000000000000000000000000', { label: 'x' }),
      404,
      'client_not_found',
    )
    const keys = await newKeyPair()
    assertError(
      await op('POST', '/operator/v1/clients', {
        ...clientBody({ keys: [keys.publicJwk] }),
        organization_id: 'org_00000000000000000000000000',
      }),
      404,
      'organization_not_found',
      'organization_id',
    )
  })

  test('a malformed client allowlist is refused', async () => {
    const keys = await newKeyPair()
    assertError(
      await op(
        'POST',
        '/operator/v1/clients',
        clientBody({ keys: [keys.publicJwk] }, { ip_allowlist: ['300.1.1.1'] }),
      ),
      400,
      'invalid_parameter',
      'ip_allowlist[0]',
    )
  })
})

describe('operator client changes in the organization audit log', () => {
  test('a client created, changed and revoked through the operator API (svc client …) is in its audit log', async () => {
    const { listAudit } = await import('../../src/modules/users/index.js')
    const keys = await newKeyPair()
    const created = await op('POST', '/operator/v1/clients', {
      organization_id: orgId,
      environment: 'sandbox',
      label: 'made by the CLI',
      jwks: { keys: [keys.publicJwk] },
    })
    assert.equal(created.statusCode, 201, created.body)
    const id = created.json().id
    assert.equal(
      (await op('PATCH', `/operator/v1/clients/${id}`, { label: 'renamed' })).statusCode,
      200,
    )
    assert.equal((await op('POST', `/operator/v1/clients/${id}/revoke`)).statusCode, 200)
    const { rows } = await listAudit(t.deps.db, orgId)
    const mine = rows.filter((r) => r.object_id === id)
    assert.deepEqual(
      mine.map((r) => [r.action, r.actor_user_id, r.actor_email]),
      [
        ['client.revoked', null, null],
        ['client.updated', null, null],
        ['client.created', null, null],
      ],
    )
  })
})
