import { Type } from 'typebox'
import { FxDetails } from '../../http/fx-details.js'
import { PageQuery } from '../../http/pagination.js'
import { CountryCode } from '../../http/schema-types.js'

const strict = { additionalProperties: false }
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()])

export const SaleStatus = Type.Union(
  [Type.Literal('on_sale'), Type.Literal('frozen'), Type.Literal('withdrawn')],
  {
    description: 'on_sale; frozen (may return to sale); withdrawn (permanent)',
  },
)
export const Region = Type.Union([
  Type.Literal('local'),
  Type.Literal('regional'),
  Type.Literal('global'),
])
export const Country = CountryCode()
export const Metadata = Type.Record(Type.String(), Type.String({ maxLength: 500 }), {
  maxProperties: 20,
  propertyNames: { minLength: 1, maxLength: 40 },
  description:
    'Up to 20 keys of at most 40 characters; values up to 500 characters. Not searchable.',
})
export const Reference = Type.String({
  minLength: 1,
  maxLength: 128,
  description: 'Your own identifier; unique per organization across orders and top-ups',
})

export const EsimPackage = Type.Object(
  {
    id: Type.String({ description: 'pkg_ id' }),
    object: Type.Literal('esim_package'),
    name: Type.String(),
    data_mb: Nullable(Type.Integer({ description: 'Data volume in MB; null means unlimited' })),
    validity_days: Type.Integer(),
    countries: Type.Array(Type.String(), { description: 'Three-letter country codes covered' }),
    region: Region,
    price: Type.Integer({ description: 'Minor units of currency' }),
    currency: Type.String(),
    status: SaleStatus,
    top_up_ids: Type.Array(Type.String(), {
      description: 'topup_ ids of the add-ons sold for this package',
    }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  {
    title: 'EsimPackage',
    examples: [
      {
        id: 'pkg_01KDVDNA1897EMTK3K6K4N7SK1',
        object: 'esim_package',
        name: 'Japan 3 GB · 30 days',
        data_mb: 3072,
        validity_days: 30,
        countries: ['JPN'],
        region: 'local',
        price: 1000,
        currency: 'USD',
        status: 'on_sale',
        top_up_ids: ['topup_01KDVDNA23PK721HE8A7GS31PE', 'topup_01KDVDNA24A7A06WG6S627E70D'],
        created_at: '2026-01-01T00:00:00.000Z',
        updated_at: '2026-01-01T00:00:00.000Z',
      },
    ],
  },
)

export const PackageListQuery = Type.Object(
  {
    ...PageQuery,
    country: Type.Optional(Country),
    region: Type.Optional(Region),
    status: Type.Optional(SaleStatus),
  },
  strict,
)

export const EsimTopUp = Type.Object(
  {
    id: Type.String({ description: 'topup_ id' }),
    object: Type.Literal('esim_top_up'),
    package_id: Type.String({ description: 'The package this add-on extends' }),
    name: Type.String(),
    data_mb: Nullable(
      Type.Integer({ description: 'Data added in MB; null on unlimited packages' }),
    ),
    validity_days: Type.Integer({
      description: 'Days added to the running package (0: same expiry)',
    }),
    price: Type.Integer(),
    currency: Type.String(),
    status: SaleStatus,
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  {
    title: 'EsimTopUp',
    examples: [
      {
        id: 'topup_01KDVDNA23PK721HE8A7GS31PE',
        object: 'esim_top_up',
        package_id: 'pkg_01KDVDNA1897EMTK3K6K4N7SK1',
        name: '+1 GB',
        data_mb: 1024,
        validity_days: 0,
        price: 400,
        currency: 'USD',
        status: 'on_sale',
        created_at: '2026-01-01T00:00:00.000Z',
        updated_at: '2026-01-01T00:00:00.000Z',
      },
    ],
  },
)

export const OrderType = Type.Union([Type.Literal('package'), Type.Literal('top_up')])
export const OrderTrigger = Type.Union([Type.Literal('manual'), Type.Literal('auto')], {
  description:
    "manual: bought through the API or the hosted page; auto: an auto top-up started by the eSIM's usage crossing its trigger",
})
export const OrderStatus = Type.Union([
  Type.Literal('completed'),
  Type.Literal('unsettled'),
  Type.Literal('failed'),
])

export const EsimOrder = Type.Object(
  {
    id: Type.String({ description: 'esord_ id' }),
    object: Type.Literal('esim_order'),
    type: OrderType,
    trigger: OrderTrigger,
    status: OrderStatus,
    package_id: Type.String(),
    top_up_id: Nullable(Type.String()),
    esim_id: Type.Optional(
      Type.String({ description: 'Absent while the order is unsettled, and on failed orders' }),
    ),
    cardholder_id: Nullable(Type.String()),
    account_id: Nullable(
      Type.String({ description: 'The account debited; null when the organization is billed' }),
    ),
    price: Type.Integer({
      description: "The package's or add-on's price, in minor units of `currency`",
    }),
    currency: Type.String(),
    charged_amount: Nullable(
      Type.Integer({
        description:
          'What the paying account is charged, in minor units of `charged_currency` (the price converted at order time ' +
          'when the account holds another currency); null when the organization is billed',
      }),
    ),
    charged_currency: Nullable(Type.String({ description: "The paying account's currency" })),
    fx: Type.Union([FxDetails, Type.Null()], {
      description:
        'How the price was converted into `charged_currency`; null when no conversion was needed',
    }),
    reference: Type.String(),
    metadata: Type.Record(Type.String(), Type.String()),
    failure_reason: Nullable(Type.String()),
    refunded_at: Nullable(
      Type.String({
        format: 'date-time',
        description:
          'When the order was refunded because its eSIM was canceled: the paying account credited (ledger entry ' +
          '`esim_refund`), or the organization not billed for it. Null otherwise',
      }),
    ),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    settled_at: Nullable(
      Type.String({ format: 'date-time', description: 'When the outcome became final' }),
    ),
  },
  {
    title: 'EsimOrder',
    examples: [
      {
        id: 'esord_01JD3QG2H3J4K5M6N7P8Q9R0S1',
        object: 'esim_order',
        type: 'package',
        trigger: 'manual',
        status: 'completed',
        package_id: 'pkg_01KDVDNA1897EMTK3K6K4N7SK1',
        top_up_id: null,
        esim_id: 'esim_01JD3QG2H9Z8Y7X6W5V4T3S2R1',
        cardholder_id: 'chd_01JD3Q7Y6X5W4V3T2S1R0Q9P8N',
        account_id: 'acct_01JD3Q7Y6X5W4V3T2S1R0Q9P8K',
        price: 1000,
        currency: 'USD',
        charged_amount: 931,
        charged_currency: 'EUR',
        fx: {
          rate: '0.92',
          markup_bps: 120,
          fee_amount: 11,
          source: 'sandbox',
          rate_at: '2026-11-20T15:00:00.000Z',
        },
        reference: 'trip-tokyo-0042',
        metadata: { trip: 'Tokyo, December' },
        failure_reason: null,
        refunded_at: null,
        created_at: '2026-11-20T15:00:00.000Z',
        updated_at: '2026-11-20T15:00:01.000Z',
        settled_at: '2026-11-20T15:00:01.000Z',
      },
    ],
  },
)

export const OrderCreateRequest = Type.Object(
  {
    package_id: Type.String({ minLength: 1, maxLength: 64 }),
    reference: Reference,
    cardholder_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    account_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'Debit the price from this account, atomically with completion',
      }),
    ),
    metadata: Type.Optional(Metadata),
  },
  strict,
)

export const OrderListQuery = Type.Object(
  {
    ...PageQuery,
    reference: Type.Optional(Type.String({ maxLength: 128 })),
    status: Type.Optional(OrderStatus),
    cardholder_id: Type.Optional(Type.String({ maxLength: 64 })),
    trigger: Type.Optional(OrderTrigger),
  },
  strict,
)

export const EsimBundle = Type.Object({
  package_id: Type.String({ description: 'The package; for a top-up, the package it extends' }),
  top_up_id: Nullable(
    Type.String({
      description:
        'topup_ id when this entry was added by a top-up; null for the package the eSIM was ordered with',
    }),
  ),
  order_id: Type.String({ description: 'The order that put it on the eSIM' }),
  name: Type.String(),
  status: Type.Union(
    [
      Type.Literal('running'),
      Type.Literal('queued'),
      Type.Literal('depleted'),
      Type.Literal('expired'),
      Type.Literal('canceled'),
    ],
    { description: 'canceled: its eSIM was canceled (the order refunded)' },
  ),
  data_mb: Nullable(
    Type.Integer({ description: 'Data volume of this entry in MB; null means unlimited' }),
  ),
  data_used_mb: Type.Integer(),
  data_remaining_mb: Nullable(Type.Integer()),
  activated_at: Nullable(Type.String({ format: 'date-time' })),
  expires_at: Nullable(Type.String({ format: 'date-time' })),
})

/** Bounds of the alert settings: usage thresholds in percent of a package, warnings in hours before validity ends. */
export const ALERT_LIMITS = { maxItems: 10, maxPct: 100, maxHours: 720 } as const

export const UsageThresholds = Type.Array(
  Type.Integer({ minimum: 1, maximum: ALERT_LIMITS.maxPct }),
  {
    maxItems: ALERT_LIMITS.maxItems,
    description:
      'Percentages of a package (1–100), ascending, no duplicates: each emits esim.usage_threshold_reached once per package ' +
      '([] sends none). esim.low_data fires at 80 % whatever this list says.',
  },
)
export const ValidityWarnings = Type.Array(
  Type.Integer({ minimum: 1, maximum: ALERT_LIMITS.maxHours }),
  {
    maxItems: ALERT_LIMITS.maxItems,
    description:
      'Hours before the validity ends (1–720), descending (the order they fire), no duplicates: each emits ' +
      'esim.validity_expiring once ([] sends none)',
  },
)

/** An eSIM's own alert settings: a field left null takes the organization's. */
export const EsimAlertOverrides = Type.Object(
  {
    usage_thresholds_pct: Nullable(UsageThresholds),
    validity_warning_hours: Nullable(ValidityWarnings),
  },
  {
    title: 'EsimAlertOverrides',
    description: "This eSIM's own alert settings; a null field takes the organization's",
  },
)

export const AutoTopUpTrigger = Type.Union([Type.Literal('depleted'), Type.Literal('threshold')], {
  description:
    'depleted: when the running package has no data left; threshold: when usage crosses `threshold_pct` of the running package',
})
/** Most auto top-ups one eSIM may run in a calendar month. */
export const MAX_AUTO_TOP_UPS_PER_MONTH = 100

const autoTopUpFields = {
  top_up_id: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'topup_ id of the add-on bought: an add-on of a package on this eSIM',
  }),
  account_id: Type.String({
    minLength: 1,
    maxLength: 64,
    description:
      "The account debited (the eSIM's cardholder's), converting when it holds another currency",
  }),
  trigger: AutoTopUpTrigger,
  max_per_month: Type.Integer({
    minimum: 1,
    maximum: MAX_AUTO_TOP_UPS_PER_MONTH,
    description: 'At most this many auto top-ups per calendar month (UTC)',
  }),
}

/** An eSIM's auto top-up as it reads. */
export const EsimAutoTopUp = Type.Object(
  {
    ...autoTopUpFields,
    threshold_pct: Nullable(
      Type.Integer({
        minimum: 1,
        maximum: 100,
        description: 'With trigger threshold: percent of the running package; null otherwise',
      }),
    ),
    runs_this_month: Type.Integer({
      description: 'Auto top-ups run this calendar month (UTC), failed ones not counted',
    }),
  },
  {
    title: 'EsimAutoTopUp',
    description: 'Buys `top_up_id` from `account_id` once each time usage crosses the trigger',
  },
)

export const AutoTopUpRequest = Type.Object(
  {
    ...autoTopUpFields,
    threshold_pct: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100,
        description: 'Required with trigger threshold (1–100); not taken with depleted',
      }),
    ),
  },
  { ...strict, title: 'EsimAutoTopUpRequest' },
)

const EsimFields = {
  id: Type.String({ description: 'esim_ id' }),
  object: Type.Literal('esim'),
  iccid: Type.String({ description: '19 digits, 89 prefix, Luhn check digit' }),
  status: Type.Union(
    ['released', 'installed', 'enabled', 'suspended', 'canceled', 'disabled', 'deleted'].map((s) =>
      Type.Literal(s),
    ),
    {
      description:
        'released (provisioned), installed (on a device), enabled (data flows), suspended (barred by the network until ' +
        'resumed), canceled (refunded before any use; final); disabled and deleted for networks that report them',
    },
  ),
  cardholder_id: Nullable(Type.String()),
  order_id: Type.String({ description: 'The order that provisioned it' }),
  country: Nullable(
    Type.String({
      description:
        'Where the device is attached now (three-letter code), as the network last reported it; null until then',
    }),
  ),
  packages: Type.Array(EsimBundle, {
    description:
      'What runs on the eSIM, oldest first: the package it was ordered with, then one entry per top-up',
  }),
  installed_at: Nullable(
    Type.String({ format: 'date-time', description: 'When the profile was installed on a device' }),
  ),
  first_used_at: Nullable(
    Type.String({ format: 'date-time', description: 'When data was first used on it' }),
  ),
  valid_until: Nullable(
    Type.String({
      format: 'date-time',
      description: 'When the validity of its last package ends (esim.expired then)',
    }),
  ),
  alert_settings: Type.Union([EsimAlertOverrides, Type.Null()], {
    description:
      "This eSIM's own alert settings; null: the organization's (`GET /v1/esim/alert_settings`)",
  }),
  auto_top_up: Type.Union([EsimAutoTopUp, Type.Null()], {
    description: 'Auto top-up from stored value; null: off (`PATCH /v1/esim/esims/{id}`)',
  }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
}

/** One eSIM as listed: the example both eSIM schemas start from. */
const ESIM_SUMMARY_EXAMPLE = {
  id: 'esim_01JD3QG2H9Z8Y7X6W5V4T3S2R1',
  object: 'esim',
  iccid: '8900000000000123458',
  status: 'enabled',
  cardholder_id: 'chd_01JD3Q7Y6X5W4V3T2S1R0Q9P8N',
  order_id: 'esord_01JD3QG2H3J4K5M6N7P8Q9R0S1',
  country: 'JPN',
  packages: [
    {
      package_id: 'pkg_01KDVDNA1897EMTK3K6K4N7SK1',
      top_up_id: null,
      order_id: 'esord_01JD3QG2H3J4K5M6N7P8Q9R0S1',
      name: 'Japan 3 GB · 30 days',
      status: 'running',
      data_mb: 3072,
      data_used_mb: 845,
      data_remaining_mb: 2227,
      activated_at: '2026-12-01T06:40:00.000Z',
      expires_at: '2026-12-31T06:40:00.000Z',
    },
  ],
  installed_at: '2026-12-01T06:35:00.000Z',
  first_used_at: '2026-12-01T06:40:00.000Z',
  valid_until: '2026-12-31T06:40:00.000Z',
  alert_settings: { usage_thresholds_pct: [50, 80, 90, 100], validity_warning_hours: null },
  auto_top_up: {
    top_up_id: 'topup_01KDVDNA23PK721HE8A7GS31PE',
    account_id: 'acct_01JD3Q7Y6X5W4V3T2S1R0Q9P8K',
    trigger: 'threshold',
    max_per_month: 3,
    threshold_pct: 90,
    runs_this_month: 1,
  },
  created_at: '2026-11-20T15:00:01.000Z',
  updated_at: '2026-12-03T21:00:00.000Z',
}

/** Listing shape: never carries the activation code. */
export const EsimSummary = Type.Object(EsimFields, {
  title: 'EsimSummary',
  examples: [ESIM_SUMMARY_EXAMPLE],
})

export const Esim = Type.Object(
  {
    ...EsimFields,
    activation_code: Type.String({
      description: 'LPA:1$<SM-DP+ address>$<matching id>: the profile itself; only on retrieve',
    }),
    smdp_address: Type.String(),
    matching_id: Type.String(),
    ios_install_url: Type.String({ description: 'One-tap install on iOS 17.4+' }),
    android_install_url: Type.String({ description: 'One-tap install on Android' }),
  },
  {
    title: 'Esim',
    // The activation code here is a placeholder: a real one installs the profile and is shown only on retrieve.
    examples: [
      {
        ...ESIM_SUMMARY_EXAMPLE,
        activation_code: 'LPA:1$smdp.example.com$EXAMPLE-MATCHING-ID',
        smdp_address: 'smdp.example.com',
        matching_id: 'EXAMPLE-MATCHING-ID',
        ios_install_url:
          'https://esimsetup.apple.com/esim_qrcode_provisioning?carddata=LPA%3A1%24smdp.example.com%24EXAMPLE-MATCHING-ID',
        android_install_url:
          'https://esimsetup.android.com/esim_qrcode_provisioning?carddata=LPA%3A1%24smdp.example.com%24EXAMPLE-MATCHING-ID',
      },
    ],
  },
)

export const EsimListQuery = Type.Object(
  {
    ...PageQuery,
    cardholder_id: Type.Optional(Type.String({ maxLength: 64 })),
  },
  strict,
)

export const TopUpPurchaseRequest = Type.Object(
  {
    top_up_id: Type.String({ minLength: 1, maxLength: 64 }),
    reference: Reference,
    account_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    metadata: Type.Optional(Metadata),
  },
  strict,
)

/** `PATCH /v1/esim/esims/{id}`: a field left out is unchanged. */
export const EsimUpdateRequest = Type.Object(
  {
    alert_settings: Type.Optional(
      Type.Union(
        [
          Type.Object(
            {
              usage_thresholds_pct: Type.Optional(Nullable(UsageThresholds)),
              validity_warning_hours: Type.Optional(Nullable(ValidityWarnings)),
            },
            strict,
          ),
          Type.Null(),
        ],
        {
          description:
            "This eSIM's own alert settings: each field given replaces its own (null: the organization's again); null drops both",
        },
      ),
    ),
    auto_top_up: Type.Optional(
      Type.Union([AutoTopUpRequest, Type.Null()], {
        description:
          "Auto top-up from stored value: replaces the settings (the month's count is kept); null turns it off",
      }),
    ),
  },
  { ...strict, title: 'EsimUpdateRequest' },
)

/** The organization's alert settings in one environment. */
export const EsimAlertSettings = Type.Object(
  {
    object: Type.Literal('esim_alert_settings'),
    usage_thresholds_pct: UsageThresholds,
    validity_warning_hours: ValidityWarnings,
    updated_at: Nullable(
      Type.String({ format: 'date-time', description: 'Null while the defaults apply' }),
    ),
  },
  {
    title: 'EsimAlertSettings',
    examples: [
      {
        object: 'esim_alert_settings',
        usage_thresholds_pct: [50, 80, 90, 100],
        validity_warning_hours: [72, 24],
        updated_at: '2026-11-20T15:00:00.000Z',
      },
    ],
  },
)

export const AlertSettingsRequest = Type.Object(
  { usage_thresholds_pct: UsageThresholds, validity_warning_hours: ValidityWarnings },
  { ...strict, title: 'EsimAlertSettingsRequest' },
)

/** Most usage reports one call queues (a network's feed batch). */
export const MAX_USAGE_REPORTS = 10_000

export const UsageReportBatchRequest = Type.Object(
  {
    reports: Type.Array(
      Type.Object(
        {
          esim_id: Type.String({ minLength: 1, maxLength: 64 }),
          data_used_mb: Type.Integer({ minimum: 0, maximum: 10_000_000 }),
        },
        strict,
      ),
      { minItems: 1, maxItems: MAX_USAGE_REPORTS },
    ),
  },
  strict,
)

export const UsageReportBatch = Type.Object(
  {
    object: Type.Literal('esim_usage_report_batch'),
    queued: Type.Integer({ description: 'Reports queued for the usage sweep' }),
  },
  {
    title: 'EsimUsageReportBatch',
    examples: [{ object: 'esim_usage_report_batch', queued: 2 }],
  },
)

export const EsimIdParams = Type.Object({ esim_id: Type.String() })
export const OrderIdParams = Type.Object({ order_id: Type.String() })
export const PackageIdParams = Type.Object({ package_id: Type.String() })
