// Where a run's WAL went, by relation: for each table and index of the bench database, the WAL records the run wrote
// on it, how many of them carried a full-page image (the first change of a page after a checkpoint writes the whole
// page) and how many distinct pages they touched. Read with pg_walinspect (PostgreSQL 15+, a superuser) over the
// run's WAL range; the scale benchmark prints it per request for the write measurements (`--wal`).
import pg from 'pg'
import { benchDatabaseUrl } from './platform-harness.js'

export interface RelationWal {
  relation: string
  records: number
  fullPages: number
  pages: number
  bytes: number
  kinds: Record<string, number>
}

/** A WAL position as PostgreSQL writes it (`high/low` 32-bit halves in hexadecimal), from its byte offset. */
const lsn = (bytes: number) =>
  `${Math.floor(bytes / 2 ** 32).toString(16)}/${(bytes % 2 ** 32).toString(16)}`

/**
 * WAL between two positions (byte offsets, as BenchServer.walBytes gives them) written on the relations of database
 * `databaseUrl`, largest first.
 */
export async function walByRelation(
  databaseUrl: string,
  from: number,
  to: number,
): Promise<RelationWal[]> {
  const admin = new pg.Client({ connectionString: benchDatabaseUrl() })
  const db = new pg.Client({ connectionString: databaseUrl })
  await admin.connect()
  await db.connect()
  try {
    await admin.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect')
    const dbOid = (
      await db.query('SELECT oid::text AS oid FROM pg_database WHERE datname = current_database()')
    ).rows[0].oid as string
    // Each record names its pages as "blkref #N: rel SPC/DB/NODE fork F blk B" (with "(FPW)" when the page went whole);
    // a record's bytes are shared among its pages.
    const { rows } = await admin.query(
      `
      WITH r AS (
        SELECT row_number() OVER () AS record, record_type, record_length, fpi_length, block_ref FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn) WHERE block_ref IS NOT NULL
      ), b AS (
        SELECT m[1] AS db, m[2] AS node, m[3] AS block, m[4] IS NOT NULL AS fpw, r.record_type, r.record_length, r.fpi_length,
               count(*) OVER (PARTITION BY r.record) AS refs
        FROM r, regexp_matches(r.block_ref, 'rel \\d+/(\\d+)/(\\d+) fork main blk (\\d+)( \\(FPW[^)]*\\))?', 'g') AS m
      )
      SELECT node, count(*)::int AS records, count(*) FILTER (WHERE fpw)::int AS full_pages,
             count(DISTINCT block)::int AS pages, sum(record_length::numeric / refs)::bigint AS bytes,
             (SELECT jsonb_object_agg(t, n) FROM (SELECT record_type AS t, count(*) AS n FROM b b2 WHERE b2.db = $3 AND b2.node = b.node GROUP BY 1) k) AS kinds
      FROM b WHERE db = $3 GROUP BY node`,
      [lsn(from), lsn(to), dbOid],
    )
    const names = new Map<string, string>(
      (
        await db.query(`SELECT pg_relation_filenode(oid)::text AS node, relname FROM pg_class
      WHERE relnamespace = 'public'::regnamespace AND pg_relation_filenode(oid) IS NOT NULL`)
      ).rows.map((r: { node: string; relname: string }) => [r.node, r.relname]),
    )
    return rows
      .map(
        (r: {
          node: string
          records: number
          full_pages: number
          pages: number
          bytes: string
          kinds: Record<string, number>
        }) => ({
          relation: names.get(r.node) ?? `filenode ${r.node}`,
          records: r.records,
          fullPages: r.full_pages,
          pages: r.pages,
          bytes: Number(r.bytes),
          kinds: r.kinds,
        }),
      )
      .sort((a: RelationWal, b: RelationWal) => b.bytes - a.bytes)
  } finally {
    await admin.end()
    await db.end()
  }
}

/** Lines of a per-request table: relation, records, full-page images, distinct pages and bytes, each per request. */
export function walLines(label: string, rows: RelationWal[], requests: number, top = 24): string[] {
  const per = (n: number) =>
    (n / Math.max(1, requests)).toFixed(n / Math.max(1, requests) < 10 ? 2 : 0)
  return [
    `  WAL by relation, ${label}, per request (records / full-page images / distinct pages over the run / bytes):`,
    ...rows.slice(0, top).map(
      (r) =>
        `    ${r.relation.padEnd(40)} ${per(r.records).padStart(6)} ${per(r.fullPages).padStart(6)} ${String(r.pages).padStart(7)} ${per(r.bytes).padStart(7)}  ${Object.entries(
          r.kinds,
        )
          .sort((a, b) => b[1] - a[1])
          .map(([k, n]) => `${k} ${per(n)}`)
          .join(', ')}`,
    ),
  ]
}
