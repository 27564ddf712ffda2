import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import {
  CATALOGUE_PAGE,
  exampleEvent,
  REGENERATE,
  renderEventCatalogue,
} from '../../scripts/event-catalogue.js'
import { isCountryCode } from '../../src/lib/countries.js'
import {
  EVENT_CATALOGUE,
  EVENT_OBJECTS,
  EVENT_TYPES,
  SUBSCRIPTION_FORMS,
} from '../../src/modules/events/catalog.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

// ajv-formats is CommonJS: under NodeNext its function is the default export's `default` (as in src/http/validation.ts).
const addFormats =
  (addFormatsModule as unknown as { default: (a: Ajv2020) => void }).default ?? addFormatsModule
const DOC_ID = 'urn:svc:openapi'

// The catalogue is published twice: as enums in /openapi.json and as docs/guides/event-catalogue.md.
describe('the published event catalogue', () => {
  let t: TestApp
  let doc: any

  before(async () => {
    t = await startTestApp()
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' })
    assert.equal(res.statusCode, 200)
    doc = res.json()
  })
  after(() => t.close())

  test('Event.type is the enum of the exact types; enabled_events items, asked and answered, the enum of every subscription form', () => {
    const schemas = doc.components.schemas
    assert.deepEqual(schemas.Event.properties.type.enum, [...EVENT_TYPES])
    assert.equal(schemas.Event.properties.type.type, 'string')
    for (const name of [
      'WebhookEndpoint',
      'WebhookEndpointCreateRequest',
      'WebhookEndpointUpdateRequest',
    ]) {
      const items = schemas[name].properties.enabled_events.items
      assert.deepEqual(items.enum, [...SUBSCRIPTION_FORMS], name)
      assert.ok(
        items.enum.includes('*') &&
          items.enum.includes('card.*') &&
          items.enum.includes('card.created'),
        name,
      )
      assert.match(schemas[name].properties.enabled_events.description, /card\.\*/, name)
    }
    const typeParam = doc.paths['/v1/events'].get.parameters.find(
      (p: any) => p.in === 'query' && p.name === 'type',
    )
    assert.match(typeParam.description, /prefix wildcard/)
    assert.ok(
      typeParam.description.includes('`esim_order.*`') && typeParam.description.includes('`*`'),
      typeParam.description,
    )
  })

  test(`docs/guides/event-catalogue.md is what \`${REGENERATE}\` writes`, () => {
    const page = relative(process.cwd(), CATALOGUE_PAGE)
    let committed = ''
    try {
      committed = readFileSync(CATALOGUE_PAGE, 'utf8')
    } catch {
      /* missing: reported below */
    }
    const expected = renderEventCatalogue(doc)
    if (committed !== expected) {
      const committedLines = committed.split('\n')
      const line = expected.split('\n').findIndex((l, i) => l !== committedLines[i])
      assert.fail(
        `${page} is stale (first difference at line ${line + 1}): run \`${REGENERATE}\` and commit the result`,
      )
    }
  })

  test('the page has a heading and anchor per type, what emits it and an example that matches the schemas', () => {
    const page = renderEventCatalogue(doc)
    const ajv = new Ajv2020({ strict: false, allErrors: true })
    addFormats(ajv)
    ajv.addFormat('country', { type: 'string', validate: isCountryCode })
    ajv.addSchema({ $id: DOC_ID, components: doc.components })
    const validEvent = ajv.compile<any>({ $ref: `${DOC_ID}#/components/schemas/Event` })
    for (const type of EVENT_TYPES) {
      const spec = EVENT_CATALOGUE[type]
      assert.ok(
        page.includes(`<a id="${type}"></a>\n\n### \`${type}\``),
        `${type}: heading and anchor`,
      )
      assert.ok(page.includes(spec.emittedBy), `${type}: what emits it`)
      const event: any = exampleEvent(doc, type)
      assert.ok(page.includes(JSON.stringify(event, null, 2)), `${type}: example`)
      assert.equal(event.type, type)
      assert.equal(event.api_version, '2026-11-01')
      assert.equal(
        event.data.object.object,
        spec.object,
        `${type}: the example carries a ${spec.object}`,
      )
      assert.ok(validEvent(event), `${type}: ${ajv.errorsText(validEvent.errors)}`)
      const validObject = ajv.getSchema(
        `${DOC_ID}#/components/schemas/${EVENT_OBJECTS[spec.object].schema}`,
      )!
      assert.ok(validObject(event.data.object), `${type}: ${ajv.errorsText(validObject.errors)}`)
    }
    for (const section of [
      '## The event object',
      '## Subscribing',
      '## Signatures and delivery',
      '`cardz.*`',
      'api_version',
      'docs/events-webhooks.md',
    ]) {
      assert.ok(page.includes(section), section)
    }
  })
})
