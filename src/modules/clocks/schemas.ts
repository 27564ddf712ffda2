import { Type, type Static } from 'typebox'
import { PageQuery } from '../../http/pagination.js'

const strict = { additionalProperties: false }

export const SandboxClock = Type.Object(
  {
    id: Type.String({ description: 'clk_ id' }),
    object: Type.Literal('sandbox_clock'),
    name: Type.Union([Type.String(), Type.Null()]),
    frozen_time: Type.String({
      format: 'date-time',
      description: "The clock's time: what the objects under it read as now.",
    }),
    status: Type.Union([Type.Literal('ready'), Type.Literal('advancing')], {
      description:
        '`advancing` while an advance runs what falls due (or one that was interrupted waits to be finished by ' +
        'the worker or the next call); `ready` otherwise.',
    }),
    deletes_after: Type.String({
      format: 'date-time',
      description: 'When the clock is deleted on its own: 30 days after its creation (wall time).',
    }),
    created_at: Type.String({ format: 'date-time' }),
  },
  {
    title: 'SandboxClock',
    examples: [
      {
        id: 'clk_01JD3Q7Y6X5W4V3T2S1R0Q9P8N',
        object: 'sandbox_clock',
        name: 'hold expiry test',
        frozen_time: '2026-11-01T00:00:00.000Z',
        status: 'ready',
        deletes_after: '2026-12-01T09:30:00.000Z',
        created_at: '2026-11-01T09:30:00.000Z',
      },
    ],
  },
)
export type SandboxClockView = Static<typeof SandboxClock>

export const SandboxClockCreate = Type.Object(
  {
    frozen_time: Type.Optional(
      Type.String({
        format: 'date-time',
        description: "The clock's starting time (RFC 3339); defaults to now.",
      }),
    ),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  { ...strict, title: 'SandboxClockCreateRequest' },
)
export type SandboxClockCreateBody = Static<typeof SandboxClockCreate>

export const SandboxClockAdvance = Type.Object(
  {
    to: Type.Optional(
      Type.String({
        format: 'date-time',
        description: "The clock's new time (RFC 3339), after its frozen_time.",
      }),
    ),
    by: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'An ISO 8601 duration to move forward by: P1D, PT36H, P1M, P1Y2M3DT4H.',
      }),
    ),
  },
  { ...strict, title: 'SandboxClockAdvanceRequest' },
)
export type SandboxClockAdvanceBody = Static<typeof SandboxClockAdvance>

export const SandboxClockParams = Type.Object({ clock_id: Type.String() })

export const SandboxClockListQuery = Type.Object({ ...PageQuery }, strict)

export const SandboxClockDeleted = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('sandbox_clock'),
    deleted: Type.Literal(true),
  },
  {
    title: 'SandboxClockDeleted',
    examples: [{ id: 'clk_01JD3Q7Y6X5W4V3T2S1R0Q9P8N', object: 'sandbox_clock', deleted: true }],
  },
)
