/** What the reports module publishes to other modules (the console): they import it only through this file. */
export { createReport, downloadReport, listReports, retrieveReport } from './service.js'
export type { ReportFile, ReportListFilter } from './service.js'
export { sendReportFile } from './file-reply.js'
export { REPORT_LIMITS, maxRowsText } from './limits.js'
export { REPORT_STATUSES, REPORT_TYPES } from './schemas.js'
export type { ReportType, ReportView } from './schemas.js'
