import { createPrivateKey, randomUUID, type KeyObject } from 'node:crypto'
import { SignJWT } from 'jose'

/** A client's private key: a JWK object, a PEM string (PKCS#8, SEC1 or PKCS#1) or a Node `KeyObject`. */
export type PrivateKeyInput = Record<string, unknown> | string | KeyObject

export type SigningAlgorithm = 'ES256' | 'RS256'

/** Seconds before a token's expiry at which the SDK stops using it and asks for a new one. */
export const TOKEN_REFRESH_MARGIN_SECONDS = 60

export interface SigningKey {
  key: KeyObject
  alg: SigningAlgorithm
  kid?: string
}

/** Reads the key once and infers the algorithm: EC P-256 signs ES256, RSA signs RS256. */
export function loadSigningKey(
  input: PrivateKeyInput,
  options: { keyId?: string; algorithm?: SigningAlgorithm } = {},
): SigningKey {
  let key: KeyObject
  let kid = options.keyId
  if (typeof input === 'string') key = createPrivateKey(input)
  else if (isKeyObject(input)) key = input
  else {
    key = createPrivateKey({ key: input as never, format: 'jwk' })
    if (kid === undefined && typeof input.kid === 'string') kid = input.kid
  }
  if (key.type !== 'private') throw new TypeError('privateKey must be a private key')
  const inferred: SigningAlgorithm | null =
    key.asymmetricKeyType === 'rsa'
      ? 'RS256'
      : key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1'
        ? 'ES256'
        : null
  if (!inferred)
    throw new TypeError('privateKey must be an EC P-256 key (ES256) or an RSA key (RS256)')
  if (options.algorithm && options.algorithm !== inferred)
    throw new TypeError(`privateKey is a ${inferred} key, not ${options.algorithm}`)
  return { key, alg: inferred, kid }
}

function isKeyObject(value: unknown): value is KeyObject {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as KeyObject).export === 'function' &&
    'asymmetricKeyType' in value
  )
}

/** A private_key_jwt client assertion (RFC 7523) for the token endpoint at `audience`. */
export async function signAssertion(
  signing: SigningKey,
  clientId: string,
  audience: string,
  nowSeconds: number,
): Promise<string> {
  return new SignJWT({
    iss: clientId,
    sub: clientId,
    aud: audience,
    iat: nowSeconds,
    exp: nowSeconds + 60,
    jti: randomUUID(),
  })
    .setProtectedHeader({
      alg: signing.alg,
      typ: 'JWT',
      ...(signing.kid ? { kid: signing.kid } : {}),
    })
    .sign(signing.key)
}

export interface CachedToken {
  accessToken: string
  /** Milliseconds (on the SDK's clock) after which the token is not used any more. */
  refreshAtMs: number
}

/**
 * Holds the access token: one request for a new one at a time, reused until 60 s before it expires;
 * `invalidate` drops it (a `401 invalid_access_token`) so the next call asks again.
 */
export class TokenCache {
  private current: CachedToken | null = null
  private pending: Promise<CachedToken> | null = null

  constructor(
    private readonly now: () => number,
    private readonly fetchToken: () => Promise<{ accessToken: string; expiresIn: number }>,
  ) {}

  async get(): Promise<string> {
    if (this.current && this.now() < this.current.refreshAtMs) return this.current.accessToken
    if (!this.pending) {
      const asked = this.now()
      this.pending = this.fetchToken()
        .then(({ accessToken, expiresIn }) => {
          this.current = {
            accessToken,
            refreshAtMs: asked + Math.max(0, expiresIn - TOKEN_REFRESH_MARGIN_SECONDS) * 1000,
          }
          return this.current
        })
        .finally(() => {
          this.pending = null
        })
    }
    return (await this.pending).accessToken
  }

  /** Forgets `token` if it is still the current one (another call may have refreshed it already). */
  invalidate(token: string): void {
    if (this.current?.accessToken === token) this.current = null
  }
}
