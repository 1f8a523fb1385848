/**
 * ONE behaviour for every RateLimiter adapter (memory, Redis). Window boundaries are driven by
 * the `now` each call passes, never by waiting.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { RateLimiter, RateQuota } from '../domain/ports/rate-limiter.ts';

export interface LimiterKind {
  name: string;
  /** `undefined` skips the adapter (its server is not there and CI is not set). */
  open(): Promise<RateLimiter | undefined>;
  close?(): Promise<void>;
}

const at = (iso: string) => new Date(iso);
const epoch = (iso: string) => Date.parse(iso) / 1000;
const quotas = (perMinute: number, perDay: number): RateQuota[] => [
  { window: 'minute', limit: perMinute },
  { window: 'day', limit: perDay },
];

export function rateLimiterContract(kind: LimiterKind): void {
  describe(`RateLimiter contract: ${kind.name}`, () => {
    let limiter: RateLimiter | undefined;
    // Keys are unique per test so adapters with shared state (Redis) start clean every time.
    const key = () => `acct_${randomUUID()}`;

    before(async () => {
      limiter = await kind.open();
    });
    after(async () => {
      await limiter?.close();
      await kind.close?.();
    });

    const test = (name: string, body: (l: RateLimiter) => Promise<void>) =>
      it(name, async (t) => {
        if (!limiter) return t.skip(`${kind.name} is not reachable`);
        await body(limiter);
      });

    test('admits up to the per-minute limit, counting down, then refuses', async (l) => {
      const k = key();
      const now = at('2026-03-14T12:00:10.500Z');
      for (let i = 1; i <= 3; i++) {
        const d = await l.consume(k, quotas(3, 100), now);
        assert.equal(d.allowed, true);
        assert.deepEqual(d.windows, [
          { window: 'minute', limit: 3, remaining: 3 - i, resetAt: epoch('2026-03-14T12:01:00Z') },
          { window: 'day', limit: 100, remaining: 100 - i, resetAt: epoch('2026-03-15T00:00:00Z') },
        ]);
      }
      const refused = await l.consume(k, quotas(3, 100), now);
      assert.equal(refused.allowed, false);
      assert.equal(refused.windows[0]!.remaining, 0);
      assert.equal(refused.windows[1]!.remaining, 97, 'the refusal took nothing from the day');
    });

    test('aligns the minute window to the UTC minute', async (l) => {
      const k = key();
      assert.equal(
        (await l.consume(k, quotas(1, 100), at('2026-03-14T12:00:00.000Z'))).allowed,
        true,
      );
      assert.equal(
        (await l.consume(k, quotas(1, 100), at('2026-03-14T12:00:59.999Z'))).allowed,
        false,
      );
      const next = await l.consume(k, quotas(1, 100), at('2026-03-14T12:01:00.000Z'));
      assert.equal(next.allowed, true);
      assert.equal(next.windows[0]!.resetAt, epoch('2026-03-14T12:02:00Z'));
      assert.equal(next.windows[1]!.remaining, 98);
    });

    test('refused requests consume nothing, in either window', async (l) => {
      const k = key();
      const now = at('2026-03-14T08:30:00Z');
      await l.consume(k, quotas(2, 100), now);
      await l.consume(k, quotas(2, 100), now);
      for (let i = 0; i < 5; i++)
        assert.equal((await l.consume(k, quotas(2, 100), now)).allowed, false);
      const nextMinute = await l.consume(k, quotas(2, 100), at('2026-03-14T08:31:00Z'));
      assert.equal(nextMinute.allowed, true);
      assert.equal(nextMinute.windows[0]!.remaining, 1);
      assert.equal(nextMinute.windows[1]!.remaining, 97);
    });

    test('aligns the daily window to the UTC day and needs room in both windows', async (l) => {
      const k = key();
      for (const minute of ['10', '11', '12']) {
        const d = await l.consume(k, quotas(10, 3), at(`2026-03-14T23:${minute}:00Z`));
        assert.equal(d.allowed, true);
      }
      const full = await l.consume(k, quotas(10, 3), at('2026-03-14T23:59:59.999Z'));
      assert.equal(full.allowed, false, 'the minute has room but the day has none');
      assert.equal(full.windows[0]!.remaining, 10, 'the refusal took nothing from the minute');
      assert.equal(full.windows[1]!.resetAt, epoch('2026-03-15T00:00:00Z'));
      const nextDay = await l.consume(k, quotas(10, 3), at('2026-03-15T00:00:00Z'));
      assert.equal(nextDay.allowed, true);
      assert.equal(nextDay.windows[1]!.remaining, 2);
      assert.equal(nextDay.windows[1]!.resetAt, epoch('2026-03-16T00:00:00Z'));
    });

    test('keeps the count when the limits change mid-window (a plan change)', async (l) => {
      const k = key();
      const now = at('2026-03-14T09:00:05Z');
      for (let i = 0; i < 5; i++) await l.consume(k, quotas(10, 100), now);
      const lowered = await l.consume(k, quotas(5, 100), now);
      assert.equal(lowered.allowed, false);
      const raised = await l.consume(k, quotas(20, 100), now);
      assert.equal(raised.allowed, true);
      assert.equal(raised.windows[0]!.remaining, 14);
      assert.equal(raised.windows[1]!.remaining, 94);
    });

    test('counts each key on its own', async (l) => {
      const [a, b] = [key(), key()];
      const now = at('2026-03-14T09:00:05Z');
      assert.equal((await l.consume(a, quotas(1, 10), now)).allowed, true);
      assert.equal((await l.consume(a, quotas(1, 10), now)).allowed, false);
      assert.equal((await l.consume(b, quotas(1, 10), now)).allowed, true);
    });

    test('is exact under concurrent calls', async (l) => {
      const k = key();
      const now = at('2026-03-14T10:00:30Z');
      const decisions = await Promise.all(
        Array.from({ length: 300 }, () => l.consume(k, quotas(120, 1000), now)),
      );
      assert.equal(decisions.filter((d) => d.allowed).length, 120);
      const after = await l.consume(k, quotas(120, 1000), now);
      assert.equal(after.windows[1]!.remaining, 880);
    });

    test('answers concurrent calls exactly as if they came one after another', async (l) => {
      const [k, other] = [key(), key()];
      const now = at('2026-03-14T10:00:30Z');
      await l.consume(k, quotas(6, 1000), now);
      const [a, b] = await Promise.all([
        Promise.all(Array.from({ length: 8 }, () => l.consume(k, quotas(6, 1000), now))),
        // Another key and other limits in the same moment must not be counted with them.
        Promise.all(Array.from({ length: 3 }, () => l.consume(other, quotas(2, 1000), now))),
      ]);
      assert.deepEqual(
        a.map((d) => [d.allowed, d.windows[0]!.remaining, d.windows[1]!.remaining]),
        [
          [true, 4, 998],
          [true, 3, 997],
          [true, 2, 996],
          [true, 1, 995],
          [true, 0, 994],
          [false, 0, 994],
          [false, 0, 994],
          [false, 0, 994],
        ],
      );
      assert.deepEqual(
        b.map((d) => d.allowed),
        [true, true, false],
      );
      // The day window binds for a third group: room for two of five.
      const day = key();
      const c = await Promise.all(
        Array.from({ length: 5 }, () => l.consume(day, quotas(100, 2), now)),
      );
      assert.deepEqual(
        c.map((d) => [d.allowed, d.windows[0]!.remaining, d.windows[1]!.remaining]),
        [
          [true, 99, 1],
          [true, 98, 0],
          [false, 98, 0],
          [false, 98, 0],
          [false, 98, 0],
        ],
      );
    });

    test('counts calls of one key with other limits or another window in one moment apart', async (l) => {
      // A plan change between two requests of one loop turn, and a request already in the
      // next minute: the shared limiter must not join them into one call, and each is
      // answered as if they came one after another.
      const k = key();
      const now = at('2026-03-14T10:00:30Z');
      const next = at('2026-03-14T10:01:05Z');
      const decisions = await Promise.all([
        l.consume(k, quotas(6, 1000), now),
        l.consume(k, quotas(6, 1000), now),
        l.consume(k, quotas(3, 1000), now),
        l.consume(k, quotas(3, 1000), now),
        l.consume(k, quotas(6, 1000), next),
      ]);
      assert.deepEqual(
        decisions.map((d) => [d.allowed, d.windows[0]!.remaining, d.windows[1]!.remaining]),
        [
          [true, 5, 999],
          [true, 4, 998],
          [true, 0, 997],
          [false, 0, 997],
          [true, 5, 996],
        ],
      );
    });

    test('answers many keys of one moment each on its own, however many', async (l) => {
      // A crowd of visitors: browser events' per-IP keys all differ, and the shared limiter
      // sends a loop turn's keys together (split past a bound): each still counts alone.
      const ips = Array.from({ length: 600 }, (_, i) => `collect:${randomUUID()}:10.0.${i}`);
      const account = key();
      const perIp: RateQuota[] = [{ window: 'minute', limit: 1 }];
      const now = at('2026-03-14T10:00:30Z');
      const [byIp, byAccount] = await Promise.all([
        Promise.all(ips.flatMap((ip) => [l.consume(ip, perIp, now), l.consume(ip, perIp, now)])),
        Promise.all([
          l.consume(account, quotas(2, 10), now),
          l.consume(account, quotas(2, 10), now),
          l.consume(account, quotas(2, 10), now),
        ]),
      ]);
      ips.forEach((_, i) => {
        assert.deepEqual(
          [byIp[2 * i]!.allowed, byIp[2 * i]!.windows[0]!.remaining, byIp[2 * i + 1]!.allowed],
          [true, 0, false],
          `visitor ${i}`,
        );
      });
      assert.deepEqual(
        byAccount.map((d) => [d.allowed, d.windows[0]!.remaining, d.windows[1]!.remaining]),
        [
          [true, 1, 9],
          [true, 0, 8],
          [false, 0, 8],
        ],
      );
    });

    test('works with one window only (failed-authentication counting)', async (l) => {
      const k = `authfail:${randomUUID()}`;
      const only: RateQuota[] = [{ window: 'minute', limit: 2 }];
      const now = at('2026-03-14T10:00:30Z');
      assert.equal((await l.consume(k, only, now)).allowed, true);
      assert.equal((await l.consume(k, only, now)).allowed, true);
      const refused = await l.consume(k, only, now);
      assert.equal(refused.allowed, false);
      assert.deepEqual(refused.windows, [
        { window: 'minute', limit: 2, remaining: 0, resetAt: epoch('2026-03-14T10:01:00Z') },
      ]);
    });
  });
}
