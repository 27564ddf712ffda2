import { renameSync, writeFileSync } from 'node:fs'
import { openDatabase } from './client.js'
import { migrateToLatest } from './migrate.js'

/** An embedded cluster with every migration applied, dumped (`pgliteImage` and `loadDataDir` open it again). */
export async function migratedClusterDump(compression: 'none' | 'gzip' = 'none'): Promise<Blob> {
  const handle = await openDatabase({ databaseUrl: null, dataDir: null })
  try {
    await migrateToLatest(handle.db)
    return await handle.dump!(compression)
  } finally {
    await handle.close()
  }
}

/** The build's step (scripts/build.mjs): the cluster a new embedded database on disk starts from (client.ts). */
export async function writeMigratedCluster(path: string): Promise<void> {
  const dump = await migratedClusterDump('gzip')
  writeFileSync(`${path}.tmp`, Buffer.from(await dump.arrayBuffer()))
  renameSync(`${path}.tmp`, path)
}
