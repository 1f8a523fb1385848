/** Stats and the events explorer (contract §13). */

import type { StatsBucket, StatsInterval, TrackedEvent } from '../model.ts';
import type { DiagnosticsQuery, DiagnosticsRollup } from '../stats/diagnostics.ts';
import type { ForwardStatus } from './forwarding-store.ts';

export interface StatsQuery {
  accountId: string;
  pixelId: string;
  interval: StatsInterval;
  /** Bucket numbers since the epoch (hours or days), `first` and `last` inclusive. */
  first: number;
  last: number;
  eventName?: string;
}

export interface StatsStore {
  /** The non-empty buckets of the range, from the per-bucket counts (never the events table). */
  eventStats(query: StatsQuery): Promise<StatsBucket[]>;
  /**
   * The same buckets, in the same order, as the API's JSON array text
   * (`[{"start","event_name","count","value_sum"}, …]`): the stats route sends it as is. A
   * 1,000-hour range over ten names is 10,000 entries (~1 MB); built by the database (or
   * straight from its rows) it costs a fraction of rows → objects → serializer.
   */
  eventStatsJson(query: StatsQuery): Promise<string>;
  /**
   * The range for a chart, bounded whatever the number of names: the `top` names with the
   * most events in the range, bucket by bucket, and every other name summed per bucket as
   * `eventName: null`; `otherNames` counts those names. At most (top + 1) rows a bucket.
   */
  topEventStats(query: StatsQuery, top: number): Promise<TopEventStats>;
  /** The diagnostics rollups (migration 025) summed over the query's hours. */
  diagnostics(query: DiagnosticsQuery): Promise<DiagnosticsRollup>;
  /**
   * The newest event of the name in the period stored without the match key (a match-quality
   * key name), looked for among the newest 50 of that name only; null when none of them.
   */
  exampleLacking(
    query: DiagnosticsQuery & { eventName: string; qualityKey: string },
  ): Promise<string | null>;
  /**
   * Revenue per hour and currency over the query's hours (revenue_hourly); with `names`,
   * per event name of those and currency instead (`hour` then 0): bounded by the names asked
   * for, whatever the pixel's number of names.
   */
  revenue(query: DiagnosticsQuery, names?: readonly string[]): Promise<RevenueRow[]>;
  /** A page of the events explorer (dashboard): see ExplorerQuery. */
  explore(query: ExplorerQuery): Promise<ExplorerPage>;
}

export interface RevenueRow {
  hour: number;
  /** Set when the rows are per name. */
  eventName: string | null;
  /** '' for values sent without a currency. */
  currency: string;
  n: number;
  valueSum: number;
}

/** The events explorer's page: newest first, before (`older`) or after (`newer`) a cursor. */
export interface ExplorerQuery {
  accountId: string;
  pixelId: string;
  limit: number;
  eventName?: string;
  source?: string;
  from?: Date;
  to?: Date;
  /** Events with a job in this status (for this destination, or any). */
  status?: { status: ForwardStatus; destinationId?: string };
  cursor?: { timestamp: Date; seq: number; direction: 'older' | 'newer' };
}

export interface ExplorerPage {
  events: Array<{
    event: TrackedEvent;
    seq: number;
    forwarding: Array<{ destinationId: string; status: string }>;
  }>;
  /** Whether there are events past each end of the page. */
  older: boolean;
  newer: boolean;
}

/** A chart's buckets (StatsStore.topEventStats): `eventName` null for the other names together. */
export interface TopEventStats {
  buckets: Array<Omit<StatsBucket, 'eventName'> & { eventName: string | null }>;
  otherNames: number;
}
