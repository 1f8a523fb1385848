/**
 * Which match keys a platform's requests carry, found by asking its own module: a request is
 * built for one probe event carrying every key with a recognisable value, and each key counts
 * as read when its value appears in the body. So diagnostics say "reach Meta without `fbc`"
 * from the registry alone, and a new platform needs no line here.
 */
import { platformUserData } from '../forwarding/platform-user-data.ts';
import { type Platform, platformModule } from '../forwarding/platforms/registry.ts';

/** The diagnostics' coverage keys (diagnostics.ts COVERAGE_KEYS) a probe can tell about. */
type CoverageKey = 'email' | 'phone' | 'external_id' | 'fbc' | 'fbp' | 'ip' | 'ua' | 'click';

/** Each raw key's probe value, and the markers that show it went out. */
const PROBES: ReadonlyArray<{ key: CoverageKey; markers: string[] }> = [
  { key: 'fbc', markers: ['PROBEFBC'] },
  { key: 'fbp', markers: ['PROBEFBP'] },
  { key: 'click', markers: ['PROBETTCLID'] },
];

/** Contact keys and IP / user agent: every platform takes them (hashed or not). */
const ALWAYS: readonly CoverageKey[] = ['email', 'phone', 'external_id', 'ip', 'ua'];

const memo = new Map<string, ReadonlySet<CoverageKey>>();

export function platformKeyUse(type: Platform): ReadonlySet<CoverageKey> {
  let use = memo.get(type);
  if (use === undefined) {
    use = probe(type);
    memo.set(type, use);
  }
  return use;
}

function probe(type: Platform): ReadonlySet<CoverageKey> {
  const module = platformModule(type);
  const now = new Date();
  const { hashes, location } = platformUserData({ email: 'probe@example.com' });
  const config: Record<string, unknown> = {};
  for (const field of module.config.form) {
    if (!field.optional) config[field.name] = field.placeholder.replace('…', 'probe') || 'probe';
  }
  try {
    const built = module.build(
      [
        {
          event: {
            accountId: 'acc_probe',
            pixelId: 'px_probe',
            eventId: 'evt_probe',
            eventName: 'Purchase',
            value: 1,
            currency: 'EUR',
            timestamp: now,
            receivedAt: now,
            url: 'https://probe.example/',
            referrer: null,
            title: null,
            searchString: null,
            userData: null,
            customData: null,
          },
          actionSource: 'website',
          hashes,
          location,
          matchKeys: {
            clientIpAddress: '203.0.113.77',
            clientUserAgent: 'Mozilla/5.0 (probe)',
            fbc: 'fb.1.1700000000000.PROBEFBC',
            fbp: 'fb.1.1700000000000.PROBEFBP',
            ttclid: 'PROBETTCLID',
          },
        },
      ],
      config,
      { now },
    );
    const body = JSON.stringify(built.requests.map((r) => [r.path, r.body]));
    const found = PROBES.filter((p) => p.markers.some((m) => body.includes(m))).map((p) => p.key);
    return new Set([...ALWAYS, ...found]);
  } catch {
    // A module the probe cannot build for: say nothing about its platform-specific keys.
    return new Set(ALWAYS);
  }
}
