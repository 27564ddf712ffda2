import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { ListEnvelope, type PageParams } from '../../http/pagination.js'
import { sendReportFile } from './file-reply.js'
import { maxRowsText } from './limits.js'
import { Report, ReportCreate, ReportIdParams, ReportListQuery } from './schemas.js'
import {
  MAX_WINDOW_DAYS,
  createReport,
  downloadReport,
  listReports,
  retrieveReport,
} from './service.js'
import { unitOf } from '../../http/idempotency.js'

const tags = ['Reports']

/** CSV exports of transactions, ledger entries and eSIM orders, generated in the background. */
export function registerReports(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/v1/reports',
    {
      config: { scope: 'transactions:read' },
      schema: {
        tags,
        summary: 'Request a CSV report of one time window',
        description:
          `Answers 201 with the report \`pending\`; a background job generates it (seconds for thousands of rows, minutes for millions), then it is \`succeeded\` ` +
          `with \`row_count\` and \`download_url\`, or \`failed\` with \`failure_reason\`. Rows are those created in [from, to), oldest first, ` +
          `as they are when the report is generated. \`to\` must be later than \`from\` and at most ${MAX_WINDOW_DAYS} days after it ` +
          `(invalid_parameter, param \`to\`). A report holds at most ${maxRowsText()} rows; a window with more fails as \`too_many_rows\`.`,
        body: ReportCreate,
        response: { 201: Report },
      },
    },
    async (req, reply) =>
      reply.code(201).send(await createReport(unitOf(req, deps), req.ctx, req.body)),
  )

  app.get(
    '/v1/reports',
    {
      config: { scope: 'transactions:read' },
      schema: {
        tags,
        summary: 'List reports, most recently created first',
        description: 'Filters: type, status.',
        querystring: ReportListQuery,
        response: { 200: ListEnvelope(Report, 'Report') },
      },
    },
    async (req) => {
      const { type, status, ...page } = req.query
      return listReports(deps, req.ctx, { type, status }, page as PageParams)
    },
  )

  app.get(
    '/v1/reports/:report_id',
    {
      config: { scope: 'transactions:read', errors: ['report_not_found'] },
      schema: {
        tags,
        summary: 'Retrieve a report (poll it until it is no longer pending)',
        params: ReportIdParams,
        response: { 200: Report },
      },
    },
    async (req) => retrieveReport(deps, req.ctx, req.params.report_id),
  )

  app.get(
    '/v1/reports/:report_id/download',
    {
      config: { scope: 'transactions:read', errors: ['report_not_found', 'report_not_ready'] },
      schema: {
        tags,
        summary: 'Download the CSV of a succeeded report',
        description:
          'RFC 4180 CSV in UTF-8: a header line, then one line per row, each ending in LF. Money is in integer minor units ' +
          'beside a `currency` column; timestamps are ISO 8601 UTC; empty fields are null. Free text starting with = + - @ is ' +
          "prefixed with ' so spreadsheets do not run it. The file is streamed with its Content-Length (the report's size_bytes). " +
          'A pending or failed report answers 422 report_not_ready.',
        params: ReportIdParams,
        response: {
          200: {
            description: 'The CSV file',
            content: { 'text/csv': { schema: Type.String() } },
          },
        },
      },
    },
    async (req, reply) => {
      return sendReportFile(reply, await downloadReport(deps, req.ctx, req.params.report_id))
    },
  )
}
