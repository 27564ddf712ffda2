/** `@svc/sdk`: the TypeScript client of the svc card issuing and eSIM API. */
export { Svc } from './svc.js'
export { Svc as default } from './svc.js'
export type { RequestOptions, ResponseInfo, SvcConfig, WithResponse } from './core.js'
export { TOKEN_REFRESH_MARGIN_SECONDS } from './auth.js'
export type { PrivateKeyInput, SigningAlgorithm } from './auth.js'
export {
  SvcAPIError,
  SvcAuthenticationError,
  SvcConnectionError,
  SvcError,
  SvcIdempotencyError,
  SvcInvalidRequestError,
  SvcPermissionError,
  SvcRateLimitError,
  SvcSignatureVerificationError,
  SvcValidationError,
} from './errors.js'
export type { SvcErrorType } from './errors.js'
export { ListResult } from './pagination.js'
export type { Page } from './pagination.js'
export type { EventStreamOptions } from './stream.js'
export {
  answerAuthorizationRequest,
  authorizationDecision,
  DEFAULT_TOLERANCE_SECONDS,
  SIGNATURE_HEADER,
  Webhooks,
} from './webhooks.js'
export type { AuthorizationDecision, SvcEvent, VerifyOptions } from './webhooks.js'
export type {
  AuthorizationEndpoint,
  AuthorizationEndpointAttempt,
  AuthorizationEndpointParams,
} from './resources/platform.js'
export type { Answer, Body, components, Item, ListParams, paths, Schemas } from './types.js'
