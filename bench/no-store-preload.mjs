// An EXPERIMENT (issue 35), not the product: loaded with `node --import` before `trackway
// serve`, it replaces the event stores' insertEvent so that POST /v1/track and /v1/collect are
// answered one loop turn after the insert is asked for (as the group commit's first caller
// waits) without writing anything; POST /v1/track/batch likewise (insertEvents, every event of
// the batch answered as inserted). Everything else runs as in the product: HTTP, auth, rate
// limits, validation, hashing, the pixel check, the answer, metrics, the workers.
//
// What it measures: the CPU a request costs outside storage, beside the durable-commit
// ceiling's in the same run (bench/track.ts modes *-no-store). If that alone is above a
// target's bound, no storage design can meet the target.
//
// BENCH_NO_STORE_WAIT_MS=n answers instead n ms after the first insert of a group is asked
// for, every insert asked meanwhile with it, as a group commit taking n ms would: whether
// waiting alone (requests held longer, answered in bursts) costs CPU.
import { PostgresEventStore } from '../dist/storage/postgres/events.js';
import { SqliteEventStore } from '../dist/storage/sqlite/events.js';

const WAIT_MS = Number(process.env.BENCH_NO_STORE_WAIT_MS ?? 0);
let group = null;

/** Settles with `value` when the current group's commit would have. */
function later(value) {
  if (WAIT_MS <= 0) return new Promise((resolve) => setImmediate(() => resolve(value)));
  if (group === null) {
    const answers = [];
    group = answers;
    setTimeout(() => {
      group = null;
      for (const answer of answers) answer();
    }, WAIT_MS);
  }
  return new Promise((resolve) => group.push(() => resolve(value)));
}

function answeredUnstored() {
  return later('inserted');
}

function batchAnsweredUnstored(events) {
  return later(events.map(() => ({ status: 'fulfilled', value: 'inserted' })));
}

for (const store of [SqliteEventStore, PostgresEventStore]) {
  store.prototype.insertEvent = answeredUnstored;
  store.prototype.insertEvents = batchAnsweredUnstored;
}
