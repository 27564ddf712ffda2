import { Type, type Static } from 'typebox'
import { PageQuery } from '../../http/pagination.js'
import { maxRowsText } from './limits.js'

const strict = { additionalProperties: false }

export const REPORT_TYPES = ['transactions', 'ledger', 'esim_orders'] as const
export const REPORT_STATUSES = ['pending', 'succeeded', 'failed'] as const
export const FAILURE_REASONS = ['too_many_rows', 'internal_error'] as const
export type ReportType = (typeof REPORT_TYPES)[number]

const ReportTypeSchema = Type.Union(
  REPORT_TYPES.map((t) => Type.Literal(t)),
  {
    description:
      "transactions: captures and refunds; ledger: entries of every account; esim_orders: the organization's eSIM orders (its eSIM billing)",
  },
)
const StatusSchema = Type.Union(REPORT_STATUSES.map((s) => Type.Literal(s)))

const Instant = (description: string) =>
  Type.Union([Type.String({ format: 'date-time' }), Type.String({ format: 'date' })], {
    description,
  })

export const ReportCreate = Type.Object(
  {
    type: ReportTypeSchema,
    from: Instant(
      'Start of the window, inclusive: an ISO 8601 timestamp with offset (a bare date means 00:00 UTC)',
    ),
    to: Instant('End of the window, exclusive; after `from`, at most 366 days later'),
  },
  {
    ...strict,
    title: 'ReportCreateRequest',
    examples: [{ type: 'transactions', from: '2026-11-01T00:00:00Z', to: '2026-12-01T00:00:00Z' }],
  },
)
export type ReportCreateBody = Static<typeof ReportCreate>

export const Report = Type.Object(
  {
    id: Type.String({ description: 'rpt_ id' }),
    object: Type.Literal('report'),
    type: ReportTypeSchema,
    status: Type.Union(
      REPORT_STATUSES.map((s) => Type.Literal(s)),
      {
        description:
          'pending (a job is generating it) → succeeded (download_url is set) | failed (failure_reason says why)',
      },
    ),
    from: Type.String({
      format: 'date-time',
      description: 'Window start, inclusive (rows by created_at)',
    }),
    to: Type.String({ format: 'date-time', description: 'Window end, exclusive' }),
    row_count: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Data lines of the CSV (the header not counted); null until succeeded',
    }),
    size_bytes: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Size of the CSV file; null until succeeded',
    }),
    failure_reason: Type.Union(
      [Type.Union(FAILURE_REASONS.map((r) => Type.Literal(r))), Type.Null()],
      {
        description: `too_many_rows: the window holds more than ${maxRowsText()} rows (ask for a shorter one); internal_error: generation kept failing`,
      },
    ),
    download_url: Type.Union([Type.String({ format: 'uri' }), Type.Null()], {
      description:
        'GET it with a token holding transactions:read to receive the CSV; null until succeeded',
    }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    completed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When it succeeded or failed',
    }),
  },
  {
    title: 'Report',
    // As created (pending), then as retrieved once the job has written it.
    examples: [
      {
        id: 'rpt_01JD3S9Z8Y7X6W5V4T3S2R1Q0P',
        object: 'report',
        type: 'transactions',
        status: 'pending',
        from: '2026-11-01T00:00:00.000Z',
        to: '2026-12-01T00:00:00.000Z',
        row_count: null,
        size_bytes: null,
        failure_reason: null,
        download_url: null,
        created_at: '2026-12-01T08:00:00.000Z',
        updated_at: '2026-12-01T08:00:00.000Z',
        completed_at: null,
      },
      {
        id: 'rpt_01JD3S9Z8Y7X6W5V4T3S2R1Q0P',
        object: 'report',
        type: 'transactions',
        status: 'succeeded',
        from: '2026-11-01T00:00:00.000Z',
        to: '2026-12-01T00:00:00.000Z',
        row_count: 2,
        size_bytes: 512,
        failure_reason: null,
        download_url: 'https://api.example.com/v1/reports/rpt_01JD3S9Z8Y7X6W5V4T3S2R1Q0P/download',
        created_at: '2026-12-01T08:00:00.000Z',
        updated_at: '2026-12-01T08:00:01.000Z',
        completed_at: '2026-12-01T08:00:01.000Z',
      },
    ],
  },
)
export type ReportView = Static<typeof Report>

export const ReportListQuery = Type.Object(
  {
    ...PageQuery,
    type: Type.Optional(ReportTypeSchema),
    status: Type.Optional(StatusSchema),
  },
  strict,
)

export const ReportIdParams = Type.Object({ report_id: Type.String() })
