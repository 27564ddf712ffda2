import type { Role } from '../users/index.js'

/**
 * Where a console route belongs, which decides who may use it (`allowed`, checked on the server for every
 * request by the router; hiding a link is never the guard):
 * - `public`: no session (sign-in, invitation links);
 * - `account`: any signed-in person, for their own session and account (home, sign-out, password, two-step
 *   verification, the environment switch);
 * - `organization`: the organization's pages: owners, developers and viewers read; only owners and developers change;
 * - `team`: the team (owners only);
 * - `audit`: the audit log (owners, and operators for the whole platform); read only;
 * - `operator`: the platform operator's pages (operators only).
 */
export type Area = 'public' | 'account' | 'organization' | 'team' | 'audit' | 'operator'

const EVERYONE: readonly Role[] = ['owner', 'developer', 'viewer', 'operator']

const READ: Record<Exclude<Area, 'public'>, readonly Role[]> = {
  account: EVERYONE,
  organization: ['owner', 'developer', 'viewer'],
  team: ['owner'],
  audit: ['owner', 'operator'],
  operator: ['operator'],
}

const WRITE: Record<Exclude<Area, 'public'>, readonly Role[]> = {
  account: EVERYONE,
  organization: ['owner', 'developer'],
  team: ['owner'],
  audit: [],
  operator: ['operator'],
}

/** Whether a person of `role` may send `method` to a route of `area`: a viewer only reads organization pages. */
export function allowed(role: Role, area: Area, method: string): boolean {
  if (area === 'public') return true
  const reads = method === 'GET' || method === 'HEAD'
  return (reads ? READ : WRITE)[area].includes(role)
}
