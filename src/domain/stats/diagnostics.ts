/**
 * Diagnostics (issue 34): what is wrong with a pixel's data and where, over a period, from the
 * hourly rollups the store keeps at ingest and at settlement (migration 025), never from a scan
 * of events. This file is the pure part: what ingestion counts for each event (`diagFlags`),
 * the rollup's shape, and the reading of it (`diagnose`), sentences first.
 */
import type { Destination } from '../forwarding/model.ts';
import { platformModule } from '../forwarding/platforms/registry.ts';
import type { TrackedEvent } from '../model.ts';
import { platformKeyUse } from './platform-keys.ts';

/**
 * What an event is counted under, one bit each, in the order of diag_hourly's columns after
 * `n` and `duplicates` (migration 025): the match keys it carried when stored (after
 * stitching), consent to ad user data denied, and the keys stitching filled.
 */
export const DIAG_FLAGS = [
  'k_email',
  'k_phone',
  'k_external_id',
  'k_fbc',
  'k_fbp',
  'k_ip',
  'k_ua',
  'k_click',
  'consent_denied',
  'enriched',
  'e_fbc',
  'e_fbp',
  'e_ip',
  'e_ua',
  'e_click',
] as const;
export type DiagFlag = (typeof DIAG_FLAGS)[number];

/** The match keys the page reports, with the field a caller sends and the flags counting it. */
export const COVERAGE_KEYS = [
  { key: 'email', label: 'Email (em)', field: 'email', flag: 'k_email', enriched: null },
  { key: 'phone', label: 'Phone (ph)', field: 'phone', flag: 'k_phone', enriched: null },
  {
    key: 'external_id',
    label: 'External id',
    field: 'external_id',
    flag: 'k_external_id',
    enriched: null,
  },
  { key: 'fbc', label: 'Click cookie (fbc)', field: 'fbc', flag: 'k_fbc', enriched: 'e_fbc' },
  { key: 'fbp', label: 'Browser cookie (fbp)', field: 'fbp', flag: 'k_fbp', enriched: 'e_fbp' },
  {
    key: 'ip',
    label: 'IP address',
    field: 'client_ip_address',
    flag: 'k_ip',
    enriched: 'e_ip',
  },
  {
    key: 'ua',
    label: 'User agent',
    field: 'client_user_agent',
    flag: 'k_ua',
    enriched: 'e_ua',
  },
  { key: 'click', label: 'Click ids', field: 'ttclid', flag: 'k_click', enriched: 'e_click' },
] as const satisfies ReadonlyArray<{
  key: string;
  label: string;
  field: string;
  flag: DiagFlag;
  enriched: DiagFlag | null;
}>;
export type CoverageKey = (typeof COVERAGE_KEYS)[number]['key'];

/** Query parameters of a landing URL that are an ad platform's click id. */
const CLICK_ID_PARAMS = [
  'gclid',
  'gbraid',
  'wbraid',
  'ttclid',
  'ScCid',
  'epik',
  'rdt_cid',
  'msclkid',
  'li_fat_id',
  'twclid',
];

const bit = (flag: DiagFlag) => 1 << DIAG_FLAGS.indexOf(flag);

/** The match-quality key names that are these flags (match-quality.ts's names). */
const QUALITY_KEY_FLAGS: Readonly<Record<string, DiagFlag>> = {
  email: 'k_email',
  phone: 'k_phone',
  external_id: 'k_external_id',
  fbc: 'k_fbc',
  fbp: 'k_fbp',
  client_ip_address: 'k_ip',
  client_user_agent: 'k_ua',
};
const ENRICHED_FLAGS: Readonly<Record<string, DiagFlag>> = {
  fbc: 'e_fbc',
  fbp: 'e_fbp',
  client_ip_address: 'e_ip',
  client_user_agent: 'e_ua',
  ttclid: 'e_click',
};

/** The event's bits of DIAG_FLAGS, computed once at ingestion from what it is stored with. */
export function diagFlags(event: TrackedEvent): number {
  let flags = 0;
  for (const key of event.matchQuality?.keys ?? []) {
    const flag = QUALITY_KEY_FLAGS[key];
    if (flag) flags |= bit(flag);
  }
  if (event.ingested?.matchKeys?.ttclid !== undefined || hasClickId(event.url)) {
    flags |= bit('k_click');
  }
  if (event.consent?.ad_user_data === 'denied') flags |= bit('consent_denied');
  const enriched = event.matchQuality?.enriched ?? [];
  if (enriched.length > 0) flags |= bit('enriched');
  for (const key of enriched) {
    const flag = ENRICHED_FLAGS[key];
    if (flag) flags |= bit(flag);
  }
  return flags;
}

function hasClickId(url: string | null): boolean {
  if (url === null || !url.includes('?')) return false;
  try {
    const params = new URL(url).searchParams;
    return CLICK_ID_PARAMS.some((p) => params.has(p));
  } catch {
    return false;
  }
}

/**
 * A forwarding outcome's reason as the rollup keys it: the message without the per-request
 * trace id a platform appends (Meta's `(fbtrace_id …)`), so equal refusals count together,
 * cut to REASON_LENGTH; '' for none.
 */
export function outcomeReason(status: string, reason: string | null, lastError: string | null) {
  const text = status === 'skipped' ? reason : status === 'failed' ? (lastError ?? reason) : null;
  if (!text) return '';
  return text.replace(TRACE_ID, '').trim().slice(0, REASON_LENGTH);
}
const TRACE_ID = /\s*\((?:fbtrace_id|trace_id|request_id|x-request-id)[:=]?\s*[^)]*\)/gi;
export const REASON_LENGTH = 200;

/** What the store sums for a period (inclusive hours). */
export interface DiagnosticsRollup {
  events: Array<{
    eventName: string;
    source: string;
    n: number;
    duplicates: number;
    flags: Record<DiagFlag, number>;
  }>;
  dropped: Array<{ field: string; n: number }>;
  revenue: Array<{ eventName: string; currency: string; n: number; valueSum: number }>;
  forwarding: Array<{
    destinationId: string;
    status: string;
    reason: string;
    n: number;
    exampleEventId: string;
  }>;
}

export interface DiagnosticsQuery {
  accountId: string;
  pixelId: string;
  firstHour: number;
  lastHour: number;
}

export interface Finding {
  /** Higher is worse: the number of events it concerns, weighted by kind. */
  weight: number;
  text: string;
  /** Where to look: an example event or a filtered list, a dashboard path. */
  href: string | null;
  linkText: string | null;
  /** What the link needs from the store: an example event lacking a key (filled later). */
  example?: { eventName: string; key: CoverageKey };
}

export interface DestinationDiagnostics {
  id: string;
  /** The destination's name, else its platform's, from the registry. */
  name: string;
  platform: string;
  counts: Record<'forwarded' | 'failed' | 'skipped' | 'pending', number>;
  total: number;
  reasons: Array<{
    status: 'failed' | 'skipped';
    reason: string;
    n: number;
    exampleEventId: string;
  }>;
}

export interface Coverage {
  key: CoverageKey;
  label: string;
  n: number;
  share: number;
  enriched: number;
}

export interface Diagnostics {
  total: number;
  duplicates: number;
  bySource: Record<string, number>;
  byName: Array<{ eventName: string; n: number; bySource: Record<string, number> }>;
  coverage: Coverage[];
  enriched: number;
  consentDenied: number;
  dropped: Array<{ field: string; n: number }>;
  revenue: Array<{ currency: string; n: number; valueSum: number }>;
  destinations: DestinationDiagnostics[];
  findings: Finding[];
}

/** The name a destination goes by on the page: its own, else its platform's (registry). */
export function destinationName(d: Pick<Destination, 'name' | 'type'>): string {
  return d.name ?? platformModule(d.type).name;
}

/** Fewer events than this in a group say too little for a sentence about it. */
const MIN_EVENTS = 10;

const pct = (share: number) => `${Math.round(share * 100)} %`;

/** What to do about a missing key, in words. */
const ADVICE: Record<CoverageKey, string> = {
  email: 'send `email` when the visitor has given it',
  phone: 'send `phone` (E.164) when the visitor has given it',
  external_id: 'send your own customer id as `external_id`',
  fbc: 'add the snippet or send `fbc`',
  fbp: 'add the snippet or send `fbp`',
  ip: 'send `client_ip_address` from your server, or add the snippet',
  ua: 'send `client_user_agent` from your server, or add the snippet',
  click: 'add the snippet, which keeps the click id of the landing page',
};

/** The keys whose absence is worth a sentence (external id and email/phone are often absent). */
const SENTENCE_KEYS: readonly CoverageKey[] = ['fbc', 'fbp', 'ip', 'ua', 'click', 'email'];

export function diagnose(
  rollup: DiagnosticsRollup,
  destinations: ReadonlyArray<Pick<Destination, 'id' | 'name' | 'type' | 'events' | 'sources'>>,
  pixelId: string,
): Diagnostics {
  const flagsByName = new Map<string, Record<DiagFlag, number> & { n: number }>();
  const totalFlags = zeroFlags();
  const bySource: Record<string, number> = {};
  const names = new Map<string, { n: number; bySource: Record<string, number> }>();
  let total = 0;
  let duplicates = 0;
  for (const row of rollup.events) {
    total += row.n;
    duplicates += row.duplicates;
    bySource[row.source] = (bySource[row.source] ?? 0) + row.n;
    const name = names.get(row.eventName) ?? { n: 0, bySource: {} };
    name.n += row.n;
    name.bySource[row.source] = (name.bySource[row.source] ?? 0) + row.n;
    names.set(row.eventName, name);
    const nameKey = `${row.eventName}\u0000${row.source}`;
    const byName = flagsByName.get(nameKey) ?? { ...zeroFlags(), n: 0 };
    byName.n += row.n;
    for (const f of DIAG_FLAGS) {
      byName[f] += row.flags[f];
      totalFlags[f] += row.flags[f];
    }
    flagsByName.set(nameKey, byName);
  }
  const coverage: Coverage[] = COVERAGE_KEYS.map((k) => ({
    key: k.key,
    label: k.label,
    n: totalFlags[k.flag],
    share: total === 0 ? 0 : totalFlags[k.flag] / total,
    enriched: k.enriched === null ? 0 : totalFlags[k.enriched],
  }));

  const revenue = new Map<string, { currency: string; n: number; valueSum: number }>();
  for (const r of rollup.revenue) {
    const c = revenue.get(r.currency) ?? { currency: r.currency, n: 0, valueSum: 0 };
    c.n += r.n;
    c.valueSum += r.valueSum;
    revenue.set(r.currency, c);
  }

  const perDestination = new Map<string, DestinationDiagnostics>();
  for (const d of destinations) {
    perDestination.set(d.id, {
      id: d.id,
      name: destinationName(d),
      platform: platformModule(d.type).name,
      counts: { forwarded: 0, failed: 0, skipped: 0, pending: 0 },
      total: 0,
      reasons: [],
    });
  }
  const reasons = new Map<string, DestinationDiagnostics['reasons'][number]>();
  for (const f of rollup.forwarding) {
    const d = perDestination.get(f.destinationId);
    if (!d || f.n === 0) continue;
    const status = f.status as keyof DestinationDiagnostics['counts'];
    if (!(status in d.counts)) continue;
    d.counts[status] += f.n;
    d.total += f.n;
    if ((status === 'failed' || status === 'skipped') && f.n > 0) {
      const key = `${f.destinationId}\u0000${status}\u0000${f.reason}`;
      const r = reasons.get(key);
      if (r) {
        r.n += f.n;
        r.exampleEventId = f.exampleEventId;
      } else {
        const entry = { status, reason: f.reason, n: f.n, exampleEventId: f.exampleEventId };
        reasons.set(key, entry);
        d.reasons.push(entry);
      }
    }
  }
  for (const d of perDestination.values()) d.reasons.sort((a, b) => b.n - a.n);

  const eventHref = (eventId: string) =>
    `/dashboard/events/${encodeURIComponent(pixelId)}/${encodeURIComponent(eventId)}`;
  const findings: Finding[] = [];
  // Missing keys, per destination and event name it takes (its filters): only the keys its
  // platform reads (found from the registry's module, platform-keys.ts).
  for (const d of destinations) {
    if ((perDestination.get(d.id)?.total ?? 0) === 0) continue;
    const use = platformKeyUse(d.type);
    const name = destinationName(d);
    for (const [eventName] of names) {
      if (d.events !== null && !d.events.includes(eventName)) continue;
      // The name's events from the sources the destination takes.
      const counts = { ...zeroFlags(), n: 0 };
      for (const source of Object.keys(bySource)) {
        if (d.sources !== null && !(d.sources as string[]).includes(source)) continue;
        const part = flagsByName.get(`${eventName}\u0000${source}`);
        if (!part) continue;
        counts.n += part.n;
        for (const f of DIAG_FLAGS) counts[f] += part[f];
      }
      if (counts.n < MIN_EVENTS) continue;
      // The two worst keys of each name and destination: more would drown the page.
      const worst = COVERAGE_KEYS.filter((k) => SENTENCE_KEYS.includes(k.key) && use.has(k.key))
        .map((k) => ({ k, missing: 1 - counts[k.flag] / counts.n }))
        .filter((x) => x.missing >= 0.3)
        .sort(
          (a, b) =>
            b.missing - a.missing ||
            SENTENCE_KEYS.indexOf(a.k.key) - SENTENCE_KEYS.indexOf(b.k.key),
        )
        .slice(0, 2);
      for (const { k, missing } of worst) {
        findings.push({
          weight: missing * counts.n,
          text: `${pct(missing)} of ${eventName} events reach ${name} without \`${k.field}\`: ${ADVICE[k.key]}.`,
          href: null,
          linkText: 'See an example event',
          example: { eventName, key: k.key },
        });
      }
    }
  }
  for (const d of perDestination.values()) {
    const settled = d.counts.forwarded + d.counts.failed + d.counts.skipped;
    if (settled < 1) continue;
    for (const status of ['failed', 'skipped'] as const) {
      const share = d.counts[status] / settled;
      const top = d.reasons.find((r) => r.status === status);
      if (!top || share < (status === 'failed' ? 0.02 : 0.2)) continue;
      findings.push({
        weight: d.counts[status] * (status === 'failed' ? 2 : 1),
        text: `${pct(share)} of events to ${d.name} were ${status}${top.reason ? `, most often: “${top.reason}” (${top.n})` : ''}.`,
        href: eventHref(top.exampleEventId),
        linkText: 'See an example event',
      });
    }
  }
  const consentDenied = totalFlags.consent_denied;
  if (total >= MIN_EVENTS && consentDenied / total >= 0.2) {
    findings.push({
      weight: consentDenied / 2,
      text: `${pct(consentDenied / total)} of events had consent to ad user data denied: platforms without a consent signal skip them.`,
      href: null,
      linkText: null,
    });
  }
  const dropped = [...rollup.dropped].sort((a, b) => b.n - a.n);
  for (const drop of dropped.slice(0, 3)) {
    findings.push({
      weight: drop.n,
      text: `${drop.n} value${drop.n === 1 ? ' was' : 's were'} left out of \`${drop.field}\` as unusable (contract §19): check their format.`,
      href: null,
      linkText: null,
    });
  }
  findings.sort((a, b) => b.weight - a.weight);

  return {
    total,
    duplicates,
    bySource,
    byName: [...names].map(([eventName, v]) => ({ eventName, ...v })).sort((a, b) => b.n - a.n),
    coverage,
    enriched: totalFlags.enriched,
    consentDenied,
    dropped,
    revenue: [...revenue.values()].sort((a, b) => a.currency.localeCompare(b.currency)),
    destinations: [...perDestination.values()],
    findings,
  };
}

function zeroFlags(): Record<DiagFlag, number> {
  return Object.fromEntries(DIAG_FLAGS.map((f) => [f, 0])) as Record<DiagFlag, number>;
}
