import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { ERROR_CATALOGUE } from '../../src/http/errors.js'
import { EVENT_TYPES } from '../../src/modules/events/catalog.js'

/**
 * Every guide of the folder, so one added later is checked too; but the event catalogue, which is written from the
 * catalogue itself (`npm run docs:events`, test/events/event-catalogue-page.test.ts).
 */
const GUIDES = readdirSync(fileURLToPath(new URL('../../docs/guides/', import.meta.url)))
  .filter((f) => f.endsWith('.md') && f !== 'event-catalogue.md')
  .map((f) => f.slice(0, -3))
/** Named in guides like an event type, but a request sent to the authorization endpoint, not an event of the catalogue. */
const NOT_EVENTS = new Set(['authorization.request'])
const dir = fileURLToPath(new URL('../../docs/guides/', import.meta.url))
const read = (name: string) => readFileSync(`${dir}${name}.md`, 'utf8')

/** GitHub's anchor for a heading: lower case, punctuation dropped (hyphens and underscores kept), spaces to hyphens. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')
}

function anchors(markdown: string): Set<string> {
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, '')
  return new Set([...withoutCode.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1])))
}

test("every status and error code a guide names is the error catalogue's", () => {
  const codes = ERROR_CATALOGUE as Record<string, { status: number }>
  for (const guide of GUIDES) {
    for (const [, status, code] of read(guide).matchAll(/`(\d{3}) ([a-z_]+)`/g)) {
      if (code === 'invalid_client') continue // the token endpoint's own RFC 6749 error
      assert.ok(codes[code], `${guide}.md names ${status} ${code}, which is not an error code`)
      assert.equal(
        codes[code].status,
        Number(status),
        `${guide}.md: ${code} answers ${codes[code].status}, not ${status}`,
      )
    }
  }
})

test('every event type a guide names is in the event catalogue', () => {
  const known = new Set<string>(EVENT_TYPES)
  for (const guide of GUIDES) {
    for (const [, type] of read(guide).matchAll(
      /`((?:cardholder|account|card|authorization|transaction|dispute|network_token|authentication|esim_order|esim|webhook_endpoint)\.[a-z_]+)`/g,
    )) {
      if (NOT_EVENTS.has(type)) continue
      assert.ok(
        known.has(type),
        `${guide}.md names the event ${type}, which the service does not emit`,
      )
    }
  }
})

test('links between guides lead to a heading that exists, and no guide leans on a document outside the repository', () => {
  for (const guide of GUIDES) {
    const markdown = read(guide)
    assert.doesNotMatch(
      markdown,
      /interface\.md|decisions\.md|shared\//,
      `${guide}.md refers to a document outside the repository`,
    )
    for (const [, target] of markdown.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^https?:/.test(target)) continue
      const [file, hash] = target.split('#')
      const name = file === '' ? guide : file.replace(/\.md$/, '')
      assert.ok(
        file === '' || /^[a-z-]+\.md$/.test(file),
        `${guide}.md links to ${target}: guides link to each other as relative .md files`,
      )
      // The event catalogue page is published beside the guides from the catalogue itself.
      if (name === 'event-catalogue' && !existsSync(`${dir}event-catalogue.md`)) continue
      assert.ok(
        existsSync(`${dir}${name}.md`),
        `${guide}.md links to ${target}, which does not exist`,
      )
      if (hash)
        assert.ok(
          anchors(read(name)).has(hash),
          `${guide}.md links to ${target}: no such heading in ${name}.md`,
        )
    }
  }
})
