/**
 * CI runs the whole suite twice, on embedded PGlite and on PostgreSQL. A test whose outcome cannot depend on the
 * database (the package build, the imports' layers, the served documentation) runs once, in the PGlite suite:
 * pass it as the test's `skip` option.
 */
export const databaseIndependent: string | false = process.env.DATABASE_URL
  ? 'does not depend on the database: runs in the embedded-PGlite suite'
  : false
