import type { StatsStore } from '../../../domain/ports/stats-store.ts';
import type { Runner } from '../query.ts';

/** The dashboard's stats are read per database (sqlite/stats.ts, postgres/stats.ts), through the runner. */
export function statsStore({ own }: Runner, stats: StatsStore): StatsStore {
  return {
    eventStats: (query) => own(() => stats.eventStats(query)),
    eventStatsJson: (query) => own(() => stats.eventStatsJson(query)),
    topEventStats: (query, top) => own(() => stats.topEventStats(query, top)),
    diagnostics: (query) => own(() => stats.diagnostics(query)),
    exampleLacking: (...args) => own(() => stats.exampleLacking(...args)),
    revenue: (query, names) => own(() => stats.revenue(query, names)),
    explore: (query) => own(() => stats.explore(query)),
  };
}
