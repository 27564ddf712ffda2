/** What the users module publishes to other modules (the console, the operator API, the demo seed): they import it only through this file. */
export {
  beginTotpEnrolment,
  confirmTotpEnrolment,
  disableTotp,
  pendingTotpEnrolment,
  recoveryCodesLeft,
  regenerateRecoveryCodes,
} from './account.js'
export type { TotpConfirmation, TotpEnrolment } from './account.js'
export { audit, listAudit } from './audit.js'
export type { Actor, AuditPage, AuditRow } from './audit.js'
export { acceptInvitation, findInvitation, INVITATION_TTL_MS, inviteUser } from './invitations.js'
export type { Acceptance, InvitationView, InviteInput } from './invitations.js'
export { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, passwordProblem } from './passwords.js'
export {
  ACCOUNT_FAILURE_LIMIT,
  ADDRESS_FAILURE_LIMIT,
  actorOf,
  changePassword,
  completeSecondFactor,
  findSecondFactorSession,
  resolveSession,
  SECOND_FACTOR_MS,
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  SIGN_IN_WINDOW_MS,
  signIn,
  signOut,
  switchEnvironment,
} from './sessions.js'
export type {
  ConsoleSession,
  PasswordChange,
  SessionUser,
  SignInOutcome,
  Visitor,
} from './sessions.js'
export {
  changeMemberRole,
  demoOwnerSignIn,
  inviteTeammate,
  listTeam,
  removeMember,
} from './team.js'
export type { DemoSignIn, Member } from './team.js'
export { MEMBER_ROLES, ROLES } from './types.js'
export type { MemberRole, Role } from './types.js'
