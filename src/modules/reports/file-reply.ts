import { Readable } from 'node:stream'
import type { FastifyReply } from 'fastify'
import type { ReportFile } from './service.js'

/**
 * Answers a report's CSV as an attachment, streamed part by part with its `content-length` (the API's download
 * and the console's). A HEAD request gets the headers without reading a single part.
 */
export function sendReportFile(reply: FastifyReply, file: ReportFile): FastifyReply {
  reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${file.filename}"`)
    .header('content-length', String(file.sizeBytes))
  return reply.send(reply.request.method === 'HEAD' ? Readable.from([]) : file.open())
}
