/**
 * deploy/grafana-dashboard.json and the alerts in docs/operations.md query only metrics that
 * /metrics serves (a renamed metric would leave a panel or an alert silently empty), and the
 * dashboard shows every metric of Trackway's own.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Harness, startHarness, testStores } from './harness.ts';

const read = (path: string) =>
  readFileSync(fileURLToPath(new URL(`../${path}`, import.meta.url)), 'utf8');
const METRIC = /\btrackway_[a-z0-9_]+/g;

interface Panel {
  title: string;
  type: string;
  targets?: Array<{ expr: string }>;
}

const [sqlite] = await testStores();

describe('deploy/grafana-dashboard.json', () => {
  let h: Harness;
  /** Series names served by /metrics (histograms as their _bucket, _sum and _count). */
  let served: Set<string>;
  before(async () => {
    h = await startHarness(sqlite!);
    // One request first, so the HTTP histogram has a series.
    await h.request(null, { method: 'GET', url: '/healthz' });
    // A destination with a waiting event, so the per-destination forwarding gauges have one.
    const owner = await h.account('pro');
    const pixel = await h.pixel(owner);
    await h.request(owner, {
      method: 'POST',
      url: `/v1/pixels/${pixel}/destinations`,
      payload: { type: 'meta', config: { pixel_id: '1', access_token: 'EAAB-dashboard' } },
    });
    await h.track(owner, {
      pixel_id: pixel,
      event_name: 'Lead',
      user_data: { email: 'a@example.com' },
    });
    const text = (await h.request(null, { method: 'GET', url: '/metrics' })).body;
    served = new Set(
      text
        .split('\n')
        .filter((line) => line !== '' && !line.startsWith('#'))
        .map((line) => /^[a-z_:][a-z0-9_:]*/i.exec(line)![0]),
    );
  });
  after(() => h.close());

  const dashboard = JSON.parse(read('deploy/grafana-dashboard.json')) as {
    title: string;
    uid: string;
    panels: Panel[];
  };
  const queried = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));

  it('is a dashboard with panels that all query something', () => {
    assert.equal(dashboard.title, 'Trackway');
    assert.ok(dashboard.uid);
    const graphs = dashboard.panels.filter((p) => p.type !== 'row');
    assert.ok(graphs.length >= 10);
    for (const panel of graphs) assert.ok(panel.targets?.length, panel.title);
  });

  it('queries only metrics that /metrics serves', () => {
    const names = new Set(queried.flatMap((expr) => expr.match(METRIC) ?? []));
    assert.ok(names.size > 0);
    for (const name of names) assert.ok(served.has(name), `${name} is not in /metrics`);
  });

  it("shows every one of Trackway's own metrics", () => {
    const own = [...served].filter(
      (name) => !/^trackway_(process|nodejs)_/.test(name) && !/_(sum|count)$/.test(name),
    );
    const text = queried.join('\n');
    for (const name of own) {
      const family = name.replace(/_bucket$/, '');
      assert.ok(text.includes(family), `${family} has no panel`);
    }
  });

  it('and the alerts in docs/operations.md query only served metrics', () => {
    const docs = read('docs/operations.md');
    const alerts = docs.slice(
      docs.indexOf('### Alerts worth setting'),
      docs.indexOf('### Dashboard'),
    );
    const names = new Set(alerts.match(METRIC) ?? []);
    assert.ok(names.size >= 8);
    for (const name of names) {
      if (name.endsWith('_')) continue; // `trackway_process_*` and the like, named as a family
      assert.ok(served.has(name), `${name} (docs/operations.md) is not in /metrics`);
    }
  });
});
