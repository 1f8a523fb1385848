/**
 * The diagnostics rollups (migration 025) on every adapter: what ingest counts (sources, names,
 * duplicates, match keys, stitching, consent, dropped values, revenue per currency), what a
 * settlement moves between forwarding statuses, and what a replay moves back.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { bareEvent, destinationRecord, storedPixel, testStores } from '../../test/harness.ts';
import type { MatchQuality, Pixel, TrackedEvent } from '../domain/model.ts';
import type { JobOutcome } from '../domain/ports/forwarding-store.ts';
import type { Store } from '../domain/ports/store.ts';
import { diagnose } from '../domain/stats/diagnostics.ts';
import { splitStatements } from './postgres/statements.ts';
import type { PostgresStore } from './postgres/store.ts';
import type { SqliteStore } from './sqlite/store.ts';

const HOUR = 3_600_000;
const T0 = new Date(Math.floor(Date.now() / HOUR) * HOUR - 5 * HOUR);

const quality = (keys: string[], enriched?: string[]): MatchQuality => ({
  score: 5,
  keys,
  missing: [],
  ...(enriched && { enriched }),
});

for (const kind of await testStores({ perAccountIngest: true })) {
  describe(`storage contract, diagnostics rollups [${kind.name}]`, () => {
    let store: Store;
    before(async () => {
      store = await kind.open();
    });
    after(() => store.close());

    const ev = (p: Pixel, id: string, fields: Partial<TrackedEvent> = {}) =>
      bareEvent({ accountId: p.accountId, pixelId: p.id, eventId: id, timestamp: T0, ...fields });
    const insert = async (events: TrackedEvent[]) =>
      (await store.events.insertEvents(events.map((event) => ({ event, emit: [] })))).map((r) =>
        r.status === 'fulfilled' ? r.value : 'rejected',
      );
    const period = (p: Pixel) => ({
      accountId: p.accountId,
      pixelId: p.id,
      firstHour: T0.getTime() / HOUR - 1,
      lastHour: T0.getTime() / HOUR + 1,
    });

    it('counts what each stored event carried, and the duplicates', async () => {
      const p = await storedPixel(store, T0);
      const outcomes = await insert([
        ev(p, 'a', {
          source: 'browser',
          matchQuality: quality(['fbp', 'client_ip_address', 'client_user_agent']),
          value: 10,
          currency: 'EUR',
          url: 'https://shop.example/?gclid=abc',
        }),
        ev(p, 'b', {
          source: 'server',
          matchQuality: quality(['email', 'fbc', 'client_ip_address'], ['fbc']),
          value: 5.5,
          currency: 'USD',
          consent: { ad_user_data: 'denied' },
          dropped: ['user_data.phone'],
        }),
        ev(p, 'c', { eventName: 'PageView', source: 'browser', matchQuality: quality([]) }),
        ev(p, 'a', { source: 'browser', matchQuality: quality([]) }),
      ]);
      assert.deepEqual(outcomes, ['inserted', 'inserted', 'inserted', 'duplicate']);
      assert.deepEqual(await insert([ev(p, 'b', { matchQuality: quality([]) })]), ['duplicate']);

      const r = await store.stats.diagnostics(period(p));
      const row = (name: string, source: string) =>
        r.events.find((e) => e.eventName === name && e.source === source);
      assert.equal(row('Purchase', 'browser')?.n, 1);
      assert.equal(row('Purchase', 'browser')?.duplicates, 1);
      assert.equal(row('Purchase', 'browser')?.flags.k_fbp, 1);
      assert.equal(row('Purchase', 'browser')?.flags.k_click, 1);
      assert.equal(row('Purchase', 'server')?.duplicates, 1);
      assert.equal(row('Purchase', 'server')?.flags.k_email, 1);
      assert.equal(row('Purchase', 'server')?.flags.consent_denied, 1);
      assert.equal(row('Purchase', 'server')?.flags.enriched, 1);
      assert.equal(row('Purchase', 'server')?.flags.e_fbc, 1);
      assert.equal(row('PageView', 'browser')?.n, 1);
      assert.deepEqual(r.dropped, [{ field: 'user_data.phone', n: 1 }]);
      assert.deepEqual(r.revenue.map((x) => [x.currency, x.n, x.valueSum]).sort(), [
        ['EUR', 1, 10],
        ['USD', 1, 5.5],
      ]);
      // Another account's period reads nothing of this pixel.
      const other = await store.stats.diagnostics({ ...period(p), accountId: 'acct_other' });
      assert.deepEqual(other.events, []);
    });

    it("migration 025's backfill rebuilds from the events what ingest kept", async () => {
      const p = await storedPixel(store, T0);
      await insert([
        ev(p, 'bf-a', {
          source: 'browser',
          matchQuality: quality(['email', 'fbc']),
          value: 3,
          currency: 'EUR',
          dropped: ['user_data.phone'],
        }),
        ev(p, 'bf-b', {
          matchQuality: quality(['client_ip_address'], ['fbp', 'client_user_agent']),
          consent: { ad_user_data: 'denied' },
          value: 2,
        }),
      ]);
      const folder = kind.name === 'sqlite' ? 'sqlite' : 'postgres';
      const migration = readFileSync(
        new URL(`./${folder}/migrations/025_diagnostics.sql`, import.meta.url),
        'utf8',
      );
      const backfill = migration.slice(migration.indexOf('-- Backfill'));
      const tables = ['diag_hourly', 'diag_dropped_hourly', 'revenue_hourly'];
      const sqlite = kind.name === 'sqlite' ? (store as unknown as SqliteStore).db : null;
      const pool = sqlite ? null : (store as unknown as PostgresStore).pool;
      const read = async () => {
        const out: Record<string, unknown[]> = {};
        for (const t of tables) {
          const text = `SELECT * FROM ${t} WHERE pixel_id = '${p.id}' ORDER BY 1, 2, 3, 4, 5`;
          const rows = sqlite
            ? (sqlite.prepare(text).all() as Record<string, unknown>[])
            : (await pool!.query(text)).rows;
          out[t] = rows.map((r) =>
            Object.fromEntries(
              Object.entries(r).map(([k, v]) => [k, Number.isNaN(Number(v)) ? v : Number(v)]),
            ),
          );
        }
        return out;
      };
      const kept = await read();
      assert.equal(kept['diag_hourly']?.length, 2);
      // Rebuilt for every pixel at once, as the migration does (this store's other pixels too).
      for (const t of [...tables, 'forward_hourly']) {
        if (sqlite) sqlite.prepare(`DELETE FROM ${t}`).run();
        else await pool!.query(`DELETE FROM ${t}`);
      }
      if (sqlite) sqlite.exec(backfill);
      // One statement per query, as the migration runner sends them (Citus plans a string of
      // several as one and gets them wrong).
      else for (const statement of splitStatements(backfill)) await pool!.query(statement);
      assert.deepEqual(await read(), kept);
    });

    it('pages the explorer both ways by cursor, filtered by source', async () => {
      const p = await storedPixel(store, T0);
      const ids = Array.from({ length: 7 }, (_, i) => `x${i}`);
      await insert(
        ids.map((id, i) =>
          ev(p, id, {
            timestamp: new Date(T0.getTime() + i * 1000),
            source: i % 2 === 0 ? 'browser' : 'server',
          }),
        ),
      );
      const q = { accountId: p.accountId, pixelId: p.id, limit: 3 };
      const first = await store.stats.explore(q);
      assert.deepEqual(
        first.events.map((e) => e.event.eventId),
        ['x6', 'x5', 'x4'],
      );
      assert.equal(first.older, true);
      assert.equal(first.newer, false);
      const last = first.events.at(-1)!;
      const second = await store.stats.explore({
        ...q,
        cursor: { timestamp: last.event.timestamp, seq: last.seq, direction: 'older' },
      });
      assert.deepEqual(
        second.events.map((e) => e.event.eventId),
        ['x3', 'x2', 'x1'],
      );
      assert.equal(second.newer, true);
      const top = second.events[0]!;
      const back = await store.stats.explore({
        ...q,
        cursor: { timestamp: top.event.timestamp, seq: top.seq, direction: 'newer' },
      });
      assert.deepEqual(
        back.events.map((e) => e.event.eventId),
        ['x6', 'x5', 'x4'],
      );
      assert.equal(back.newer, false);
      const browser = await store.stats.explore({ ...q, limit: 10, source: 'browser' });
      assert.deepEqual(
        browser.events.map((e) => e.event.eventId),
        ['x6', 'x4', 'x2', 'x0'],
      );
      const other = await store.stats.explore({ ...q, accountId: 'acct_other' });
      assert.deepEqual(other.events, []);
    });

    it('moves forwarding outcomes from pending at settlement and back at a replay', async () => {
      const p = await storedPixel(store, T0);
      const destination = destinationRecord(p, T0);
      assert.equal(await store.destinations.createDestination(destination, 10), 'created');
      const ids = ['f1', 'f2', 'f3', 'f4'];
      await insert(ids.map((id) => ev(p, id, { matchQuality: quality(['email']) })));
      const count = async () => {
        const r = await store.stats.diagnostics(period(p));
        const out: Record<string, number> = {};
        for (const f of r.forwarding) {
          const k = f.reason ? `${f.status}:${f.reason}` : f.status;
          out[k] = (out[k] ?? 0) + f.n;
        }
        return { out, r };
      };
      assert.deepEqual((await count()).out, { pending: 4 });

      const [batch] = await store.forwarding.claim({
        now: new Date(),
        take: () => 10,
        busy: [],
        leaseMs: 60_000,
        owner: 'w',
        only: destination.id,
      });
      assert.equal(batch?.jobs.length, 4);
      const outcome = (
        j: (typeof batch.jobs)[number],
        status: JobOutcome['status'],
        extra: Partial<JobOutcome> = {},
      ): JobOutcome => ({
        pixelId: j.pixelId,
        eventId: j.eventId,
        ...(j.ref !== undefined && { ref: j.ref }),
        status,
        reason: null,
        lastError: null,
        forwardedAt: status === 'forwarded' ? new Date() : null,
        nextAttemptAt: status === 'pending' ? new Date(Date.now() + 60_000) : null,
        attempts: [],
        ...extra,
      });
      const byId = new Map(batch.jobs.map((j) => [j.eventId, j]));
      await store.forwarding.settle({
        destination,
        owner: 'w',
        state: null,
        emit: [],
        outcomes: [
          outcome(byId.get('f1')!, 'forwarded'),
          outcome(byId.get('f2')!, 'failed', { lastError: 'Invalid parameter' }),
          outcome(byId.get('f3')!, 'skipped', { reason: 'outside the window' }),
          outcome(byId.get('f4')!, 'pending', { lastError: 'timeout' }),
        ],
      });
      const settled = await count();
      assert.deepEqual(settled.out, {
        forwarded: 1,
        'failed:Invalid parameter': 1,
        'skipped:outside the window': 1,
        pending: 1,
      });
      const d = diagnose(settled.r, [destination], p.id);
      assert.equal(d.destinations[0]?.name, 'Meta');
      assert.deepEqual(d.destinations[0]?.counts, {
        forwarded: 1,
        failed: 1,
        skipped: 1,
        pending: 1,
      });
      assert.equal(
        d.destinations[0]?.reasons.find((x) => x.status === 'failed')?.exampleEventId,
        'f2',
      );

      // A replay of the failed: its 1 goes back to pending.
      const promised = await store.forwarding.replay({
        accountId: p.accountId,
        pixelId: p.id,
        destinationId: destination.id,
        from: new Date(T0.getTime() - HOUR),
        to: new Date(T0.getTime() + HOUR),
        statuses: ['failed'],
        now: new Date(),
      });
      assert.equal(promised, 1);
      const held = await store.forwarding.claimReplay({
        owner: 'r',
        now: new Date(),
        leaseMs: 30_000,
      });
      assert.ok(held);
      for (;;) {
        const step = await store.forwarding.advanceReplay({
          replay: held,
          owner: 'r',
          now: new Date(),
          leaseMs: 30_000,
        });
        if (!step || step.done) break;
      }
      const failedOnly = await store.stats.explore({
        accountId: p.accountId,
        pixelId: p.id,
        limit: 10,
        status: { status: 'pending', destinationId: destination.id },
      });
      assert.deepEqual(failedOnly.events.map((e) => e.event.eventId).sort(), ['f2', 'f4']);
      assert.deepEqual(failedOnly.events[0]?.forwarding, [
        { destinationId: destination.id, status: 'pending' },
      ]);
      assert.deepEqual((await count()).out, {
        forwarded: 1,
        'failed:Invalid parameter': 0,
        'skipped:outside the window': 1,
        pending: 2,
      });
    });
  });
}
