import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { Agent, csrfOf, GOOD_PASSWORD, invite, person, type Person } from './support.js'

let t: TestApp
let orgId: string
let owner: Person

before(async () => {
  t = await startTestApp()
  orgId = (await t.operator('POST', '/operator/v1/organizations', { name: 'Umbrella Labs' })).id
  owner = await person(t, 'owner', orgId)
})
after(() => t.close())

async function userId(email: string): Promise<string | undefined> {
  return (
    await t.deps.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst()
  )?.id
}

async function auditActions(objectId: string): Promise<string[]> {
  return (
    await t.deps.db
      .selectFrom('audit_log')
      .select('action')
      .where('object_id', '=', objectId)
      .orderBy('id')
      .execute()
  ).map((r) => r.action)
}

async function csrf(agent: Agent): Promise<string> {
  return csrfOf((await agent.get('/console/team')).body)
}

describe('team: roles, removal and pending invitations (owners)', () => {
  test("an owner changes a member's role; it holds from the member's next request, and is audited", async () => {
    const dev = await person(t, 'developer', orgId)
    const id = (await userId(dev.email))!
    assert.equal((await dev.agent.get('/console/developers/webhooks')).statusCode, 200)
    const res = await owner.agent.post(`/console/team/members/${id}/role`, {
      _csrf: await csrf(owner.agent),
      role: 'viewer',
    })
    assert.equal(res.statusCode, 303)
    assert.equal(res.headers.location, '/console/team')
    const page = await owner.agent.get('/console/team')
    assert.match(page.body, new RegExp(`${dev.email.replace(/\./g, '\\.')} is now viewer`))
    // The member's open session now has the viewer's rights: a change is refused.
    const home = await dev.agent.get('/console')
    const refused = await dev.agent.post('/console/team/invitations', {
      _csrf: csrfOf(home.body),
      email: 'x@example.test',
      role: 'viewer',
    })
    assert.equal(refused.statusCode, 403)
    assert.deepEqual(await auditActions(id), [
      'user.invited',
      'invitation.accepted',
      'user.role_changed',
    ])
  })

  test('the last owner who can sign in cannot be demoted or removed; with a second owner they can', async () => {
    const ownerId = (await userId(owner.email))!
    const demote = await owner.agent.post(`/console/team/members/${ownerId}/role`, {
      _csrf: await csrf(owner.agent),
      role: 'developer',
    })
    assert.equal(demote.statusCode, 422)
    assert.match(demote.body, /at least one owner/)
    const remove = await owner.agent.post(`/console/team/members/${ownerId}/remove`, {
      _csrf: await csrf(owner.agent),
    })
    assert.equal(remove.statusCode, 422)

    // An invited owner who has not set a password does not count as the owner the organization keeps.
    const { answer } = await invite(t, {
      email: 'pending.owner@example.test',
      role: 'owner',
      organization_id: orgId,
    })
    assert.equal(
      (
        await owner.agent.post(`/console/team/members/${ownerId}/role`, {
          _csrf: await csrf(owner.agent),
          role: 'developer',
        })
      ).statusCode,
      422,
    )
    await owner.agent.post(`/console/team/members/${answer.user_id}/remove`, {
      _csrf: await csrf(owner.agent),
    })

    const second = await person(t, 'owner', orgId)
    const secondId = (await userId(second.email))!
    const ok = await second.agent.post(`/console/team/members/${secondId}/role`, {
      _csrf: await csrf(second.agent),
      role: 'developer',
    })
    assert.equal(ok.statusCode, 303, 'two owners: one may step down')
    assert.equal(
      (await second.agent.get('/console/team')).statusCode,
      403,
      "a developer now: the team page is the owners'",
    )
  })

  test('removing a member asks first, then ends their sessions at once; the audit log keeps what they did', async () => {
    const viewer = await person(t, 'viewer', orgId)
    const id = (await userId(viewer.email))!
    const confirm = await owner.agent.get(`/console/team/members/${id}/remove`)
    assert.equal(confirm.statusCode, 200)
    assert.match(confirm.body, /loses access to the console at once/)
    assert.equal(await userId(viewer.email), id, 'the confirmation page changes nothing')

    const res = await owner.agent.post(`/console/team/members/${id}/remove`, {
      _csrf: csrfOf(confirm.body),
    })
    assert.equal(res.statusCode, 303)
    assert.equal(await userId(viewer.email), undefined)
    const after = await viewer.agent.get('/console')
    assert.equal(after.statusCode, 303, "the removed member's session is gone")
    assert.match(String(after.headers.location), /^\/console\/sign-in/)
    assert.equal(
      (await new Agent(t).signIn(viewer.email, GOOD_PASSWORD)).statusCode,
      401,
      'and they cannot sign in again',
    )
    assert.deepEqual(await auditActions(id), [
      'user.invited',
      'invitation.accepted',
      'user.removed',
    ])
    const log = await owner.agent.get('/console/audit')
    assert.match(
      log.body,
      new RegExp(`${id} \\(removed\\)`),
      'their earlier actions name them as removed',
    )
  })

  test('revoking a pending invitation makes its link stop working; the email can be invited again', async () => {
    const inv = await owner.agent.submit(
      '/console/team',
      { email: 'late.joiner@example.test', role: 'developer' },
      '/console/team/invitations',
    )
    assert.equal(inv.statusCode, 201)
    const link = /http:\/\/svc\.test(\/console\/invitations\/[A-Za-z0-9]+)/.exec(inv.body)![1]
    const id = (await userId('late.joiner@example.test'))!
    const team = await owner.agent.get('/console/team')
    assert.match(team.body, /aria-label="Revoke invitation of late\.joiner@example\.test"/)
    const confirm = await owner.agent.get(`/console/team/members/${id}/remove`)
    assert.match(confirm.body, /invitation link sent to late\.joiner@example\.test stops working/)
    assert.equal(
      (
        await owner.agent.post(`/console/team/members/${id}/remove`, {
          _csrf: csrfOf(confirm.body),
        })
      ).statusCode,
      303,
    )
    const dead = await new Agent(t).get(link)
    assert.doesNotMatch(
      dead.body,
      /name="password_confirmation"/,
      'the revoked link no longer sets a password',
    )
    assert.deepEqual(await auditActions(id), ['user.invited', 'invitation.revoked'])
    assert.equal(
      (
        await owner.agent.submit(
          '/console/team',
          { email: 'late.joiner@example.test', role: 'viewer' },
          '/console/team/invitations',
        )
      ).statusCode,
      201,
    )
  })

  test("another organization's member or an unknown id is a 404 page; a developer and a viewer are refused (403)", async () => {
    const otherOrg = (await t.operator('POST', '/operator/v1/organizations', { name: 'Globex' })).id
    const stranger = await person(t, 'developer', otherOrg)
    const strangerId = (await userId(stranger.email))!
    for (const path of [
      `/console/team/members/${strangerId}/remove`,
      '/console/team/members/usr_nope/remove',
    ]) {
      assert.equal((await owner.agent.get(path)).statusCode, 404)
      assert.equal(
        (await owner.agent.post(path, { _csrf: await csrf(owner.agent) })).statusCode,
        404,
      )
    }
    assert.equal(
      (
        await owner.agent.post(`/console/team/members/${strangerId}/role`, {
          _csrf: await csrf(owner.agent),
          role: 'viewer',
        })
      ).statusCode,
      404,
    )
    assert.equal(await userId(stranger.email), strangerId)

    const dev = await person(t, 'developer', orgId)
    const ownerId = (await userId(owner.email))!
    const home = await dev.agent.get('/console')
    assert.equal(
      (
        await dev.agent.post(`/console/team/members/${ownerId}/remove`, {
          _csrf: csrfOf(home.body),
        })
      ).statusCode,
      403,
    )
    assert.equal(
      (
        await dev.agent.post(`/console/team/members/${ownerId}/role`, {
          _csrf: csrfOf(home.body),
          role: 'viewer',
        })
      ).statusCode,
      403,
    )
    assert.equal(await userId(owner.email), ownerId)
  })
})
