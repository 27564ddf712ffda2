import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, test } from 'node:test'
import { buildJobRegistry } from '../../src/jobs/registry.js'
import { JOB_TYPES, SCHEDULE_TYPES } from '../../src/jobs/types.js'
import { MODULES } from '../../src/modules/index.js'
import { answer, defineHook, HookTable } from '../../src/lib/slots.js'

const SRC = fileURLToPath(new URL('../../src/', import.meta.url))

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f))
}

describe('one composition root', () => {
  test('every job type of the catalogue has exactly one handler among the modules, and nothing else has one', () => {
    const claims = new Map<string, string[]>()
    for (const m of MODULES) {
      for (const type of Object.keys(m.jobs ?? {}))
        claims.set(type, [...(claims.get(type) ?? []), m.name])
      for (const s of m.schedules ?? []) claims.set(s.type, [...(claims.get(s.type) ?? []), m.name])
    }
    for (const type of [...JOB_TYPES, ...SCHEDULE_TYPES]) {
      assert.equal(
        claims.get(type)?.length,
        1,
        `${type} is handled by ${JSON.stringify(claims.get(type) ?? [])}`,
      )
    }
    assert.deepEqual(
      [...claims.keys()].sort(),
      [...JOB_TYPES, ...SCHEDULE_TYPES].sort(),
      'every handled type is in the catalogue',
    )

    const registry = buildJobRegistry(MODULES)
    assert.deepEqual([...registry.handlers.keys()].sort(), [...JOB_TYPES, ...SCHEDULE_TYPES].sort())
    assert.deepEqual(registry.schedules.map((s) => s.type).sort(), [...SCHEDULE_TYPES].sort())
    for (const s of registry.schedules) assert.ok(s.everyMs > 0, `${s.type} runs at an interval`)
  })

  test('a job type claimed by two modules is refused when the registry is built', () => {
    const handler = async () => {}
    assert.throws(
      () =>
        buildJobRegistry([
          { name: 'a', jobs: { 'card.issue': handler } },
          { name: 'b', jobs: { 'card.issue': handler } },
        ]),
      /card\.issue is claimed by both a and b/,
    )
    const every = { type: 'housekeeping' as const, everyMs: 1000, run: handler }
    assert.throws(
      () =>
        buildJobRegistry([
          { name: 'a', schedules: [every] },
          { name: 'b', schedules: [every] },
        ]),
      /housekeeping is claimed by both a and b/,
    )
    const hook = defineHook<() => string>('accountCards', () => 'fallback')
    const twice = [
      { name: 'a', hooks: [answer(hook, () => 'a')] },
      { name: 'b', hooks: [answer(hook, () => 'b')] },
    ]
    assert.throws(() => new HookTable(twice), /accountCards is answered by both a and b/)
  })

  test('modules have distinct names, and the registry is a pure function of the list', () => {
    assert.equal(new Set(MODULES.map((m) => m.name)).size, MODULES.length)
    const empty = buildJobRegistry([])
    assert.equal(empty.handlers.size, 0, 'importing every module registered nothing anywhere')
    assert.equal(empty.schedules.length, 0)
    const a = buildJobRegistry(MODULES)
    const b = buildJobRegistry(MODULES)
    assert.notEqual(a.handlers, b.handlers)
    assert.deepEqual([...a.handlers.keys()], [...b.handlers.keys()])
  })

  test('every job type a source file enqueues or names is in the catalogue', () => {
    const known = new Set<string>([...JOB_TYPES, ...SCHEDULE_TYPES])
    for (const file of sourceFiles(SRC)) {
      const text = readFileSync(file, 'utf8')
      for (const m of text.matchAll(
        /export const \w+ = '([^']+)' satisfies (?:JobType|ScheduleType)/g,
      )) {
        assert.ok(known.has(m[1]), `${relative(SRC, file)}: ${m[1]}`)
      }
      for (const m of text.matchAll(/enqueue\([^)]*?type: '([^']+)'/g))
        assert.ok(known.has(m[1]), `${relative(SRC, file)}: ${m[1]}`)
    }
  })

  test('nothing is wired by importing a file: no registration, setter or per-process singleton in src', () => {
    const offences: string[] = []
    for (const file of sourceFiles(SRC)) {
      const name = relative(SRC, file)
      const text = readFileSync(file, 'utf8')
      for (const line of text.split('\n')) {
        // A bare import exists only for its side effects; Kysely's table type augmentations are the one kind allowed.
        if (/^import '[^']+'/.test(line) && !/^import '[^']*\/(types|table)\.js'/.test(line))
          offences.push(`${name}: ${line}`)
        if (/^(registerJobHandler|registerSchedule|set[A-Z]\w*)\(/.test(line))
          offences.push(`${name}: ${line}`)
        if (/^export function set[A-Z]\w*\(/.test(line)) offences.push(`${name}: ${line}`)
        if (/^let \w+(: [^=]+)? = /.test(line) && name.startsWith('modules/'))
          offences.push(`${name}: ${line}`)
        if (/^const \w+(: [^=]+)? = new (WeakMap|Map)\b/.test(line) && name.startsWith('modules/'))
          offences.push(`${name}: ${line}`)
      }
    }
    assert.deepEqual(offences, [])
  })
})
