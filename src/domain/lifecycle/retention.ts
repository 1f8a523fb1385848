import { type Operator, OperatorError } from '../accounts/accounts.ts';
import type { PlanName } from '../accounts/plans.ts';
import type { Account } from '../model.ts';
import type { Clock, Timers } from '../ports/clock.ts';
import type { Store } from '../ports/store.ts';
import { startPeriodic } from './periodic.ts';

const DAY_MS = 86_400_000;

/**
 * Days each plan keeps events (contract §15). Enterprise keeps what `plans set
 * --retention-days` says and, until that is set, everything: no data is deleted that nobody
 * asked to delete. Starter has no API access and keeps what it has under the pro rule.
 */
export const PLAN_RETENTION_DAYS: Record<PlanName, number | null> = {
  starter: 90,
  pro: 90,
  ultra: 365,
  enterprise: null,
};

/** Rows one purge transaction deletes: short enough that ingest never waits long for it. */
export const PURGE_BATCH = 1_000;

/** Pixels read per page while walking an account's pixels. */
const PIXEL_PAGE = 100;

export async function retentionOf(store: Store, account: Account): Promise<number | null> {
  if (account.plan === 'enterprise') return store.lifecycle.retentionDays(account.id);
  return PLAN_RETENTION_DAYS[account.plan];
}

/** `plans set --retention-days N`: enterprise accounts only. */
export async function setRetentionDays(op: Operator, accountId: string, days: number) {
  const account = await op.store.accounts.getAccount(accountId);
  if (!account) throw new OperatorError(`No such account: ${accountId}`);
  if (account.plan !== 'enterprise') {
    throw new OperatorError(
      `--retention-days is for enterprise accounts only; ${accountId} is on ${account.plan} (${PLAN_RETENTION_DAYS[account.plan]} days)`,
    );
  }
  await op.store.lifecycle.setRetentionDays(accountId, days);
  return { account, days };
}

/**
 * After a batch that took `tookMs`, the purge waits twice as long: it has at most a third of
 * the process (and of SQLite's single writer) while ingest has the rest. Only yielding to the
 * event loop (setImmediate) let it take far more: pinned, SQLite ingest fell to 0.28× its rate
 * while a month of 1,000,000 events was purged (docs/decisions.md, "Stats and purge
 * measurements"). Capped, so one slow batch cannot stall the purge for long.
 */
export const PURGE_PAUSE_FACTOR = 2;
const PURGE_PAUSE_MAX_MS = 1_000;

const pacedPause = (tookMs: number) =>
  new Promise<void>((resolve) =>
    setTimeout(resolve, Math.min(PURGE_PAUSE_MAX_MS, tookMs * PURGE_PAUSE_FACTOR)),
  );

/**
 * Deletes every event older than its account's retention (by `timestamp`), pixel by pixel, in
 * transactions of at most `batch` rows, pausing between them (`pause`, given how long the batch
 * took) so requests (and on SQLite, ingest's single writer) get their turn. Returns how many it
 * deleted.
 */
export async function purgeExpired(
  deps: { store: Store; clock: Clock },
  options: { batch?: number; pause?: (tookMs: number) => Promise<void> } = {},
): Promise<number> {
  const batch = options.batch ?? PURGE_BATCH;
  const pause = options.pause ?? pacedPause;
  const { store } = deps;
  let deleted = 0;
  for (const account of await store.accounts.listAccounts()) {
    const days = await retentionOf(store, account);
    if (days === null) continue;
    const before = new Date(deps.clock.now().getTime() - days * DAY_MS);
    for (let offset = 0; ; offset += PIXEL_PAGE) {
      const { pixels } = await store.pixels.listPixels(account.id, { limit: PIXEL_PAGE, offset });
      for (const pixel of pixels) {
        for (;;) {
          // Wall time on purpose (not the injected clock): the pause shares out real time.
          const started = performance.now();
          const n = await store.lifecycle.purgeBatch(account.id, pixel.id, before, batch);
          deleted += n;
          if (n < batch) break;
          await pause(performance.now() - started);
        }
      }
      if (pixels.length < PIXEL_PAGE) break;
    }
  }
  return deleted;
}

/** The first purge runs this long after start (contract §15: within a minute)… */
export const PURGE_FIRST_AFTER_MS = 30_000;
/** …and then this often. */
export const PURGE_EVERY_MS = 3_600_000;

/**
 * Runs purgeExpired within a minute of start and then hourly, on the clock's timers (a test
 * clock fires them by moving time). One purge at a time; a failed one is reported and the
 * next runs on schedule. Returns what stops it (waiting for a purge under way to finish).
 */
export function startPurgeJob(
  deps: { store: Store; clock: Clock & Timers },
  report: { purged(deleted: number): void; failed(error: unknown): void },
): () => Promise<void> {
  return startPeriodic(
    deps.clock,
    { firstAfterMs: PURGE_FIRST_AFTER_MS, everyMs: PURGE_EVERY_MS },
    () => purgeExpired(deps),
    { done: report.purged, failed: report.failed },
  );
}
