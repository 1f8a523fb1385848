/**
 * US state and Canadian province / territory names → their 2-letter postal codes, keyed by the
 * name as state normalisation leaves it (lower-case, no spaces or punctuation). Meta wants `st`
 * as the 2-letter code (conversions-api/parameters/customer-information-parameters: "use the
 * 2-character ANSI abbreviation code"); a full name hashed as given never matches. Sources: USPS
 * Publication 28 Appendix B; Canada Post's province and territory symbols.
 */
const CODES: Readonly<Record<string, string>> = {
  alabama: 'al',
  alaska: 'ak',
  arizona: 'az',
  arkansas: 'ar',
  california: 'ca',
  colorado: 'co',
  connecticut: 'ct',
  delaware: 'de',
  districtofcolumbia: 'dc',
  florida: 'fl',
  georgia: 'ga',
  hawaii: 'hi',
  idaho: 'id',
  illinois: 'il',
  indiana: 'in',
  iowa: 'ia',
  kansas: 'ks',
  kentucky: 'ky',
  louisiana: 'la',
  maine: 'me',
  maryland: 'md',
  massachusetts: 'ma',
  michigan: 'mi',
  minnesota: 'mn',
  mississippi: 'ms',
  missouri: 'mo',
  montana: 'mt',
  nebraska: 'ne',
  nevada: 'nv',
  newhampshire: 'nh',
  newjersey: 'nj',
  newmexico: 'nm',
  newyork: 'ny',
  northcarolina: 'nc',
  northdakota: 'nd',
  ohio: 'oh',
  oklahoma: 'ok',
  oregon: 'or',
  pennsylvania: 'pa',
  rhodeisland: 'ri',
  southcarolina: 'sc',
  southdakota: 'sd',
  tennessee: 'tn',
  texas: 'tx',
  utah: 'ut',
  vermont: 'vt',
  virginia: 'va',
  washington: 'wa',
  westvirginia: 'wv',
  wisconsin: 'wi',
  wyoming: 'wy',
  americansamoa: 'as',
  guam: 'gu',
  northernmarianaislands: 'mp',
  puertorico: 'pr',
  usvirginislands: 'vi',
  virginislands: 'vi',
  alberta: 'ab',
  britishcolumbia: 'bc',
  manitoba: 'mb',
  newbrunswick: 'nb',
  newfoundlandandlabrador: 'nl',
  newfoundland: 'nl',
  northwestterritories: 'nt',
  novascotia: 'ns',
  nunavut: 'nu',
  ontario: 'on',
  princeedwardisland: 'pe',
  quebec: 'qc',
  québec: 'qc',
  saskatchewan: 'sk',
  yukon: 'yt',
};

/**
 * The 2-letter code of a US state or Canadian province named in full, else the value as it is.
 * Only for US and Canadian addresses (or when the country is not given): elsewhere a region may
 * share a name with one (Georgia, the country's regions aside, is not a state there).
 */
export function regionCode(normalisedState: string, country: string | undefined): string {
  const c = country?.trim().toLowerCase();
  if (c !== undefined && c !== 'us' && c !== 'ca') return normalisedState;
  return CODES[normalisedState] ?? normalisedState;
}
