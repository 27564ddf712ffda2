import { createHash } from 'node:crypto'

/**
 * Data of migration 0051, frozen with it: a migration imports nothing but the database layer, so a later change
 * to product code (catalogue rules, ICCID helpers) can never change what an applied migration wrote.
 */

/** The Luhn check digit of an ICCID body (ITU-T E.118). */
function iccidCheckDigit(body: string): string {
  const sum = [...body].reverse().reduce((s, c, i) => {
    const d = Number(c) * (i % 2 === 0 ? 2 : 1)
    return s + (d > 9 ? d - 9 : d)
  }, 0)
  return String((10 - (sum % 10)) % 10)
}

/** The platform's eSIM catalogue as first shipped: local, regional and global plans priced like the market (USD cents). */

export interface SeedPackage {
  id: string
  name: string
  data_mb: number | null
  validity_days: number
  countries: string[]
  region: 'local' | 'regional' | 'global'
  price: number
  currency: 'USD'
}

export interface SeedTopUp {
  id: string
  package_id: string
  name: string
  data_mb: number | null
  validity_days: number
  price: number
  currency: 'USD'
}

export interface SeedProfile {
  iccid: string
  smdp_address: string
  matching_id: string
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
/** Catalogue ids sort in catalogue order and are the same on every deployment (documentation can quote them). */
const CATALOGUE_EPOCH = Date.UTC(2026, 0, 1)

function stableId(prefix: 'pkg' | 'topup', index: number, slug: string): string {
  let time = CATALOGUE_EPOCH + index
  let head = ''
  for (let i = 0; i < 10; i++) {
    head = CROCKFORD[time % 32] + head
    time = Math.floor(time / 32)
  }
  const digest = createHash('sha256').update(`${prefix}:${slug}`).digest()
  const tail = Array.from(digest.subarray(0, 16), (b) => CROCKFORD[b % 32]).join('')
  return `${prefix}_${head}${tail}`
}

const GB = 1024

/** Local plans: country, display name, and the market price of the four standard volumes (1/3/5/10 GB). */
const LOCAL: [string, string, [number, number, number, number], number | null][] = [
  ['USA', 'United States', [450, 1100, 1600, 2600], 3900],
  ['CAN', 'Canada', [650, 1500, 2200, 3700], null],
  ['MEX', 'Mexico', [550, 1300, 1900, 3200], null],
  ['GBR', 'United Kingdom', [450, 900, 1300, 2100], 3500],
  ['FRA', 'France', [450, 900, 1300, 2100], 3500],
  ['DEU', 'Germany', [450, 900, 1300, 2100], null],
  ['ESP', 'Spain', [450, 900, 1300, 2100], null],
  ['ITA', 'Italy', [450, 900, 1300, 2100], null],
  ['TUR', 'Türkiye', [500, 1100, 1700, 2900], null],
  ['JPN', 'Japan', [450, 1000, 1500, 2400], 3300],
  ['KOR', 'South Korea', [500, 1100, 1700, 2800], null],
  ['THA', 'Thailand', [400, 800, 1200, 1900], 2700],
  ['IDN', 'Indonesia', [450, 1000, 1500, 2400], null],
  ['SGP', 'Singapore', [450, 900, 1300, 2200], null],
  ['ARE', 'United Arab Emirates', [900, 2200, 3300, 5500], null],
  ['BRA', 'Brazil', [650, 1600, 2400, 3900], null],
  ['AUS', 'Australia', [500, 1200, 1800, 3000], null],
  ['IND', 'India', [500, 1100, 1700, 2900], null],
]
const LOCAL_PLANS: [number, number][] = [
  [1 * GB, 7],
  [3 * GB, 30],
  [5 * GB, 30],
  [10 * GB, 30],
]

const EUROPE = [
  'ALB',
  'AUT',
  'BEL',
  'BGR',
  'BIH',
  'CHE',
  'CYP',
  'CZE',
  'DEU',
  'DNK',
  'ESP',
  'EST',
  'FIN',
  'FRA',
  'GBR',
  'GRC',
  'HRV',
  'HUN',
  'IRL',
  'ISL',
  'ITA',
  'LIE',
  'LTU',
  'LUX',
  'LVA',
  'MKD',
  'MLT',
  'MNE',
  'NLD',
  'NOR',
  'POL',
  'PRT',
  'ROU',
  'SRB',
  'SVK',
  'SVN',
  'SWE',
  'TUR',
  'UKR',
]
const ASIA = [
  'BGD',
  'CHN',
  'HKG',
  'IDN',
  'IND',
  'JPN',
  'KHM',
  'KOR',
  'LKA',
  'MAC',
  'MYS',
  'PAK',
  'PHL',
  'SGP',
  'THA',
  'TWN',
  'VNM',
]
const NORTH_AMERICA = ['CAN', 'MEX', 'USA']
const LATIN_AMERICA = [
  'ARG',
  'BOL',
  'BRA',
  'CHL',
  'COL',
  'CRI',
  'ECU',
  'GTM',
  'HND',
  'MEX',
  'NIC',
  'PAN',
  'PER',
  'PRY',
  'SLV',
  'URY',
]
const MIDDLE_EAST = ['ARE', 'BHR', 'EGY', 'ISR', 'JOR', 'KWT', 'MAR', 'OMN', 'QAT', 'SAU', 'TUN']
const AFRICA = ['CIV', 'EGY', 'GHA', 'KEN', 'MAR', 'NGA', 'RWA', 'SEN', 'TZA', 'UGA', 'ZAF', 'ZMB']
const CARIBBEAN = ['ABW', 'BHS', 'BRB', 'CUW', 'DOM', 'JAM', 'LCA', 'PRI', 'TTO']
const OCEANIA = ['AUS', 'FJI', 'NZL']

/** Regional plans: name, countries, and [data GB, days, price] variants. */
const REGIONAL: [string, string[], [number, number, number][]][] = [
  [
    'Europe',
    EUROPE,
    [
      [1, 7, 500],
      [3, 30, 1300],
      [5, 30, 1900],
      [10, 30, 3000],
      [20, 30, 4900],
    ],
  ],
  [
    'Asia',
    ASIA,
    [
      [1, 7, 800],
      [3, 30, 1800],
      [5, 30, 2600],
      [10, 30, 4200],
    ],
  ],
  [
    'North America',
    NORTH_AMERICA,
    [
      [1, 7, 700],
      [3, 30, 1600],
      [5, 30, 2300],
      [10, 30, 3700],
    ],
  ],
  [
    'Latin America',
    LATIN_AMERICA,
    [
      [1, 7, 1300],
      [3, 30, 3200],
      [5, 30, 4800],
    ],
  ],
  [
    'Middle East and North Africa',
    MIDDLE_EAST,
    [
      [1, 7, 1300],
      [3, 30, 3300],
      [5, 30, 4900],
    ],
  ],
  [
    'Africa',
    AFRICA,
    [
      [1, 7, 1900],
      [3, 30, 4900],
    ],
  ],
  [
    'Caribbean',
    CARIBBEAN,
    [
      [1, 7, 1700],
      [3, 30, 4200],
    ],
  ],
  [
    'Oceania',
    OCEANIA,
    [
      [1, 7, 600],
      [3, 30, 1500],
      [5, 30, 2200],
    ],
  ],
]

const GLOBAL_COUNTRIES = [
  ...new Set([
    ...EUROPE,
    ...ASIA,
    ...NORTH_AMERICA,
    ...LATIN_AMERICA,
    ...MIDDLE_EAST,
    ...AFRICA,
    ...CARIBBEAN,
    ...OCEANIA,
  ]),
].sort()
const GLOBAL: [number, number, number][] = [
  [1, 7, 900],
  [3, 30, 2400],
  [5, 30, 3500],
  [10, 60, 6300],
  [20, 90, 10900],
]

function volume(mb: number | null): string {
  return mb === null ? 'Unlimited' : mb % GB === 0 ? `${mb / GB} GB` : `${mb} MB`
}

function roundPrice(cents: number): number {
  return Math.max(100, Math.round(cents / 50) * 50)
}

/** Builds the catalogue: packages in a fixed order, and for each the add-ons it accepts. */
export function buildCatalogue(): { packages: SeedPackage[]; topUps: SeedTopUp[] } {
  const packages: SeedPackage[] = []
  const add = (slug: string, p: Omit<SeedPackage, 'id' | 'currency'>) =>
    packages.push({ id: stableId('pkg', packages.length, slug), currency: 'USD', ...p })

  for (const [iso, name, prices, unlimited] of LOCAL) {
    LOCAL_PLANS.forEach(([mb, days], i) =>
      add(`${iso}-${mb}-${days}`, {
        name: `${name} ${volume(mb)} · ${days} days`,
        data_mb: mb,
        validity_days: days,
        countries: [iso],
        region: 'local',
        price: prices[i],
      }),
    )
    if (unlimited !== null)
      add(`${iso}-unlimited-7`, {
        name: `${name} Unlimited · 7 days`,
        data_mb: null,
        validity_days: 7,
        countries: [iso],
        region: 'local',
        price: unlimited,
      })
  }
  for (const [name, countries, variants] of REGIONAL) {
    for (const [gb, days, price] of variants) {
      add(`${name}-${gb}-${days}`, {
        name: `${name} ${gb} GB · ${days} days`,
        data_mb: gb * GB,
        validity_days: days,
        countries,
        region: 'regional',
        price,
      })
    }
  }
  for (const [gb, days, price] of GLOBAL) {
    add(`global-${gb}-${days}`, {
      name: `Global ${gb} GB · ${days} days`,
      data_mb: gb * GB,
      validity_days: days,
      countries: GLOBAL_COUNTRIES,
      region: 'global',
      price,
    })
  }

  const topUps: SeedTopUp[] = []
  const addTopUp = (slug: string, t: Omit<SeedTopUp, 'id' | 'currency'>) =>
    topUps.push({ id: stableId('topup', topUps.length, slug), currency: 'USD', ...t })
  for (const p of packages) {
    if (p.data_mb === null) {
      addTopUp(`${p.id}-days`, {
        package_id: p.id,
        name: 'Unlimited +7 days',
        data_mb: null,
        validity_days: 7,
        price: p.price,
      })
      continue
    }
    // A small add-on within the current validity (on plans of 3 GB and more), and a renewal of the full volume that also extends it.
    if (p.data_mb >= 3 * GB) {
      addTopUp(`${p.id}-1gb`, {
        package_id: p.id,
        name: '+1 GB',
        data_mb: GB,
        validity_days: 0,
        price: roundPrice((p.price / p.data_mb) * GB * 1.25),
      })
    }
    addTopUp(`${p.id}-renew`, {
      package_id: p.id,
      name: `+${volume(p.data_mb)} · +${p.validity_days} days`,
      data_mb: p.data_mb,
      validity_days: p.validity_days,
      price: p.price,
    })
  }
  return { packages, topUps }
}

export const SEED_SMDP_ADDRESS = 'smdp.sandbox.svc.example'
/** Issuer prefix of seeded profiles: 89 (telecom) + 882 (international networks) + issuer 47. */
const SEED_ICCID_PREFIX = '8988247'

/** Blank profiles of the first stock; serials 1…count, so every deployment starts with the same ICCIDs. */
export function seedInventory(count: number): SeedProfile[] {
  const out: SeedProfile[] = []
  for (let serial = 1; serial <= count; serial++) {
    const body = SEED_ICCID_PREFIX + String(serial).padStart(11, '0')
    const digest = createHash('sha256').update(`matching:${body}`).digest()
    const chars = Array.from(digest.subarray(0, 20), (b) => CROCKFORD[b % 32]).join('')
    out.push({
      iccid: body + iccidCheckDigit(body),
      smdp_address: SEED_SMDP_ADDRESS,
      matching_id: chars.match(/.{5}/g)!.join('-'),
    })
  }
  return out
}

/** How many blank profiles a fresh deployment starts with. */
export const SEED_PROFILE_COUNT = 1000
