import type { Area } from './access.js'

/**
 * A console page as the navigation and the placeholders know it. Until a page registers a GET route at
 * `href`, the router serves a placeholder there (under the same `area`, so the role guard already holds) that
 * names what to use meanwhile.
 */
export interface PlannedPage {
  href: string
  label: string
  area: Exclude<Area, 'public'>
  /** The navigation group it is listed under; absent: not in the navigation (linked from elsewhere). */
  group?: 'main' | 'Developers' | 'Operator'
  /** What to use until the page exists: the CLI or API call that does the same. */
  meanwhile: string
  /** The release (`SVC_RELEASES`) the page's feature belongs to: off, it is not in the navigation. */
  release?: string
  /** The only environment whose navigation lists it (a sandbox tool); absent: every environment's. */
  environment?: 'sandbox'
}

/** The navigation, in order; each person sees the entries their role may read. */
export const PAGES: readonly PlannedPage[] = [
  { href: '/console', label: 'Home', area: 'account', group: 'main', meanwhile: '' },
  {
    href: '/console/developers/api-clients',
    label: 'API clients',
    area: 'organization',
    group: 'Developers',
    meanwhile:
      'Register a client with `npx svc client create --org ORG --env ENV --label LABEL --jwks-file FILE`, or POST /v1/oauth_clients.',
  },
  {
    href: '/console/developers/webhooks',
    label: 'Webhooks',
    area: 'organization',
    group: 'Developers',
    meanwhile: 'Create an endpoint with POST /v1/webhook_endpoints {url, enabled_events}.',
  },
  {
    href: '/console/developers/events',
    label: 'Events',
    area: 'organization',
    group: 'Developers',
    meanwhile: 'List events with GET /v1/events (filter with ?type=).',
  },
  {
    href: '/console/cardholders',
    label: 'Cardholders',
    area: 'organization',
    group: 'main',
    meanwhile: '',
  },
  {
    href: '/console/accounts',
    label: 'Accounts',
    area: 'organization',
    group: 'main',
    meanwhile: '',
  },
  { href: '/console/cards', label: 'Cards', area: 'organization', group: 'main', meanwhile: '' },
  {
    href: '/console/authorizations',
    label: 'Authorizations',
    area: 'organization',
    group: 'main',
    meanwhile: '',
  },
  {
    href: '/console/authorization-rules',
    label: 'Authorization rules',
    area: 'organization',
    group: 'main',
    meanwhile: '',
  },
  {
    href: '/console/transactions',
    label: 'Transactions',
    area: 'organization',
    group: 'main',
    meanwhile: '',
  },
  {
    href: '/console/disputes',
    label: 'Disputes',
    area: 'organization',
    group: 'main',
    meanwhile: '',
  },
  {
    href: '/console/network-tokens',
    label: 'Network tokens',
    area: 'organization',
    group: 'main',
    meanwhile: '',
  },
  {
    href: '/console/authentications',
    label: '3-D Secure',
    area: 'organization',
    group: 'main',
    meanwhile: '',
    release: 'three_d_secure',
  },
  {
    href: '/console/esim/orders',
    label: 'eSIM orders',
    area: 'organization',
    group: 'main',
    meanwhile: '',
  },
  { href: '/console/esims', label: 'eSIMs', area: 'organization', group: 'main', meanwhile: '' },
  {
    href: '/console/reports',
    label: 'Reports',
    area: 'organization',
    group: 'main',
    meanwhile: '',
  },
  { href: '/console/search', label: 'Search', area: 'organization', group: 'main', meanwhile: '' },
  {
    href: '/console/sandbox/processor-faults',
    label: 'Processor faults',
    area: 'organization',
    group: 'main',
    meanwhile: '',
  },
  {
    href: '/console/sandbox/clocks',
    label: 'Sandbox clocks',
    area: 'organization',
    group: 'main',
    meanwhile: '',
    environment: 'sandbox',
  },
  { href: '/console/team', label: 'Team', area: 'team', group: 'main', meanwhile: '' },
  { href: '/console/audit', label: 'Audit log', area: 'audit', group: 'main', meanwhile: '' },
  {
    href: '/console/operator/organizations',
    label: 'Organizations',
    area: 'operator',
    group: 'Operator',
    meanwhile: '`npx svc org list`, `npx svc org create NAME`.',
  },
  {
    href: '/console/operator/programs',
    label: 'Programs',
    area: 'operator',
    group: 'Operator',
    meanwhile:
      '`npx svc program create --org ORG --env ENV --name NAME --processor sim_full --currencies USD`.',
  },
  {
    href: '/console/operator/clients',
    label: 'Clients',
    area: 'operator',
    group: 'Operator',
    meanwhile:
      '`npx svc operator GET "/operator/v1/clients?organization_id=ORG"`, `npx svc client revoke ID`.',
  },
  {
    href: '/console/operator/network-policies',
    label: 'Network policies',
    area: 'operator',
    group: 'Operator',
    meanwhile: '`npx svc network-policy set --org ORG --env ENV --cidrs 203.0.113.0/24`.',
  },
  {
    href: '/console/operator/esim',
    label: 'eSIM',
    area: 'operator',
    group: 'Operator',
    meanwhile: '`npx svc esim inventory load FILE.csv`, `npx svc esim inventory`.',
  },
  {
    href: '/console/operator/health',
    label: 'System health',
    area: 'operator',
    group: 'Operator',
    meanwhile: 'GET /readyz and GET /metrics.',
  },
  // Linked from the home page's checklist.
  {
    href: '/console/programs',
    label: 'Programs',
    area: 'organization',
    meanwhile:
      'List them with GET /v1/programs; the platform operator creates them (`npx svc program create`).',
  },
]
