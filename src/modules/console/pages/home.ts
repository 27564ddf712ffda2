import type { AppDeps } from '../../../app-deps.js'
import type { Scope } from '../../../http/context.js'
import { hasCard } from '../../cards/index.js'
import { hasActiveClient } from '../../oauth/index.js'
import { countCallerPrograms } from '../../programs/index.js'
import { hasWebhookEndpoint } from '../../webhooks/index.js'
import { allowed } from '../access.js'
import { html, type Html } from '../../../lib/html.js'
import { PAGES } from '../nav.js'
import { activitySection, type HomeActivity, homeActivity } from './home-charts.js'
import type { ConsolePage, PageContext } from '../router.js'

/** One step of getting started: whether the organization's data shows it done, where to do it, and the command. */
export interface ChecklistItem {
  key: string
  title: string
  done: boolean
  href: string
  command: string
}

/**
 * The getting-started checklist of one scope (organization, environment), read from the modules that own
 * each kind of object through their published functions.
 */
export async function gettingStarted(deps: AppDeps, scope: Scope): Promise<ChecklistItem[]> {
  const [programs, client, endpoint, card] = await Promise.all([
    countCallerPrograms(deps.db, scope),
    hasActiveClient(deps.db, scope),
    hasWebhookEndpoint(deps.db, scope),
    hasCard(deps.db, scope),
  ])
  const base = deps.config.baseUrl
  const env = scope.environment
  return [
    {
      key: 'program',
      title: 'A card program',
      done: programs > 0,
      href: '/console/programs',
      command: `npx svc program create --org ${scope.organizationId} --env ${env} --name "My program" --processor sim_full --currencies USD`,
    },
    {
      key: 'client',
      title: 'An API client registered',
      done: client,
      href: '/console/developers/api-clients',
      command: `npx svc client create --org ${scope.organizationId} --env ${env} --label "My backend" --jwks-file my-jwks.json`,
    },
    {
      key: 'webhook',
      title: 'A webhook endpoint',
      done: endpoint,
      href: '/console/developers/webhooks',
      command: `TOKEN=$(npx svc token)\ncurl -s ${base}/v1/webhook_endpoints -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" -d '{"url":"https://example.com/hooks","enabled_events":["*"]}'`,
    },
    {
      key: 'card',
      title: 'A first card',
      done: card,
      href: '/console/cards',
      command: `# a cardholder (POST /v1/cardholders) and an account (POST /v1/accounts) first; the bodies are in ${base}/docs\ncurl -s ${base}/v1/cards -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" -d @card.json`,
    },
  ]
}

function checklist(items: ChecklistItem[]): Html {
  const done = items.filter((i) => i.done).length
  return html`<section class="card" aria-labelledby="start-h"><h2 id="start-h">Getting started</h2>
<p class="muted">${done} of ${items.length} done.</p>
<ol class="checklist">${items.map(
    (i) => html`<li class="${i.done ? 'done' : 'todo'}" data-item="${i.key}">
<span class="mark" aria-hidden="true">${i.done ? '✓' : ''}</span>
<div><a href="${i.href}">${i.title}</a> <span class="muted">${i.done ? '(done)' : '(to do)'}</span>
${i.done ? '' : html`<pre><code>${i.command}</code></pre>`}</div></li>`,
  )}</ol></section>`
}

function memberHome(ctx: PageContext, items: ChecklistItem[], activity: HomeActivity): Html {
  const env = ctx.session.environment
  return html`<p>${ctx.organizationName} · <strong>${env === 'production' ? 'Production' : 'Sandbox'}</strong> data. Every page of the organization shows the environment selected at the top.</p>
${activitySection(activity)}
${checklist(items)}`
}

function operatorHome(ctx: PageContext): Html {
  const pages = PAGES.filter(
    (p) => p.group === 'Operator' && allowed(ctx.session.user.role, p.area, 'GET'),
  )
  return html`<p>You are signed in as a platform operator: the pages below act on every organization.</p>
<ul>${pages.map((p) => html`<li><a href="${p.href}">${p.label}</a></li>`)}</ul>
<p>Invite another operator or an organization's first owner with <code>npx svc user invite</code>.</p>`
}

/** Home: an organization's getting-started checklist, or the operator's overview. */
export const homePage: ConsolePage = {
  name: 'home',
  register(router, deps) {
    router.get('/console', 'account', async (ctx) => {
      if (!ctx.scope) return ctx.render({ title: 'Operator console', body: operatorHome(ctx) })
      const [items, activity] = await Promise.all([
        gettingStarted(deps, ctx.scope),
        homeActivity(deps, ctx.scope, deps.clock.now()),
      ])
      return ctx.render({ title: 'Home', body: memberHome(ctx, items, activity) })
    })
  },
}
