import type { Kysely } from 'kysely'
import { buildCatalogue, seedInventory, SEED_PROFILE_COUNT } from './data/esim-catalogue.js'

/**
 * The catalogue and a first stock of blank profiles exist on every deployment from its first start
 * (embedded or PostgreSQL, demo seeding or not): they are platform data, not demo data.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const now = new Date()
  const { packages, topUps } = buildCatalogue()
  await db
    .insertInto('esim_packages')
    .values(
      packages.map((p) => ({
        ...p,
        countries: JSON.stringify(p.countries),
        status: 'on_sale',
        created_at: now,
        updated_at: now,
      })),
    )
    .execute()
  for (let i = 0; i < topUps.length; i += 200) {
    await db
      .insertInto('esim_top_ups')
      .values(
        topUps
          .slice(i, i + 200)
          .map((t) => ({ ...t, status: 'on_sale', created_at: now, updated_at: now })),
      )
      .execute()
  }
  const profiles = seedInventory(SEED_PROFILE_COUNT)
  for (let i = 0; i < profiles.length; i += 250) {
    await db
      .insertInto('esim_profiles')
      .values(
        profiles.slice(i, i + 250).map((p) => ({
          ...p,
          state: 'available',
          order_id: null,
          loaded_at: now,
          updated_at: now,
        })),
      )
      .execute()
  }
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
