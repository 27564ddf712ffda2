/** English names of the countries the catalogue covers, for the hosted page's destination picker. */
export const COUNTRY_NAMES: Record<string, string> = {
  ABW: 'Aruba', ALB: 'Albania', ARE: 'United Arab Emirates', ARG: 'Argentina', AUS: 'Australia', AUT: 'Austria', BEL: 'Belgium',
  BGD: 'Bangladesh', BGR: 'Bulgaria', BHR: 'Bahrain', BHS: 'Bahamas', BIH: 'Bosnia and Herzegovina', BOL: 'Bolivia', BRA: 'Brazil',
  BRB: 'Barbados', CAN: 'Canada', CHE: 'Switzerland', CHL: 'Chile', CHN: 'China', CIV: "Côte d'Ivoire", COL: 'Colombia',
  CRI: 'Costa Rica', CUW: 'Curaçao', CYP: 'Cyprus', CZE: 'Czechia', DEU: 'Germany', DNK: 'Denmark', DOM: 'Dominican Republic',
  ECU: 'Ecuador', EGY: 'Egypt', ESP: 'Spain', EST: 'Estonia', FIN: 'Finland', FJI: 'Fiji', FRA: 'France', GBR: 'United Kingdom',
  GHA: 'Ghana', GRC: 'Greece', GTM: 'Guatemala', HKG: 'Hong Kong', HND: 'Honduras', HRV: 'Croatia', HUN: 'Hungary',
  IDN: 'Indonesia', IND: 'India', IRL: 'Ireland', ISL: 'Iceland', ISR: 'Israel', ITA: 'Italy', JAM: 'Jamaica', JOR: 'Jordan',
  JPN: 'Japan', KEN: 'Kenya', KHM: 'Cambodia', KOR: 'South Korea', KWT: 'Kuwait', LCA: 'Saint Lucia', LIE: 'Liechtenstein',
  LKA: 'Sri Lanka', LTU: 'Lithuania', LUX: 'Luxembourg', LVA: 'Latvia', MAC: 'Macao', MAR: 'Morocco', MEX: 'Mexico',
  MKD: 'North Macedonia', MLT: 'Malta', MNE: 'Montenegro', MYS: 'Malaysia', NGA: 'Nigeria', NIC: 'Nicaragua', NLD: 'Netherlands',
  NOR: 'Norway', NZL: 'New Zealand', OMN: 'Oman', PAK: 'Pakistan', PAN: 'Panama', PER: 'Peru', PHL: 'Philippines', POL: 'Poland',
  PRI: 'Puerto Rico', PRT: 'Portugal', PRY: 'Paraguay', QAT: 'Qatar', ROU: 'Romania', RWA: 'Rwanda', SAU: 'Saudi Arabia',
  SEN: 'Senegal', SGP: 'Singapore', SLV: 'El Salvador', SRB: 'Serbia', SVK: 'Slovakia', SVN: 'Slovenia', SWE: 'Sweden',
  THA: 'Thailand', TTO: 'Trinidad and Tobago', TUN: 'Tunisia', TUR: 'Türkiye', TWN: 'Taiwan', TZA: 'Tanzania', UGA: 'Uganda',
  UKR: 'Ukraine', URY: 'Uruguay', USA: 'United States', VNM: 'Vietnam', ZAF: 'South Africa', ZMB: 'Zambia',
}

export function countryName(code: string): string {
  return COUNTRY_NAMES[code] ?? code
}
