/**
 * Where the CPU of one POST /v1/track goes: the SQLite service (one process, every check on,
 * the enterprise account of bench/lib.ts) runs under `node --cpu-prof`, pinned to core 1 with
 * wrk on core 0 like `npm run bench`; after a warm-up it is loaded for `--seconds`, and the
 * samples taken in that window are charged to stages (bench/cpu-stages.ts) and divided by the
 * requests answered in it. Prints the table, saves it to bench/results/profile.json and keeps
 * the .cpuprofile there too (open it in Chrome DevTools or speedscope to look deeper).
 *
 *   npm run bench:profile -- [--seconds 10] [--connections 100] [--pin | --no-pin] [--note TEXT]
 *                            [--raw-http]
 *
 * --raw-http profiles bench/raw-track-server.mjs instead (the issue 21 experiment: the same
 * product code with POST /v1/track answered by bare node:http, no Fastify) and saves to
 * bench/results/profile-raw-http.json.
 *
 * The profiler itself costs CPU (sampling every --cpu-prof-interval µs, here 250): compare the
 * stages with each other and with /proc's CPU per request printed beside them, not with an
 * unprofiled run's absolute figures.
 */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type CpuProfile, STAGES, stageTable } from './cpu-stages.ts';
import {
  choosePinning,
  load,
  PIN_OPTIONS,
  peakRssMb,
  purchaseTemplate,
  saveResult,
  startBenchService,
  table,
  withCpu,
} from './lib.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '100' },
    note: { type: 'string' },
    'raw-http': { type: 'boolean' },
    ...PIN_OPTIONS,
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const pinned = choosePinning(values);

const dir = mkdtempSync(join(tmpdir(), 'trackway-profile-'));
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
try {
  const service = await startBenchService(
    `sqlite:${join(dir, 'bench.db')}`,
    {},
    1,
    ['--cpu-prof', '--cpu-prof-interval', '250', '--cpu-prof-dir', dir],
    values['raw-http']
      ? [fileURLToPath(new URL('./raw-track-server.mjs', import.meta.url))]
      : undefined,
  );
  const pid = service.running.child.pid!;
  const target = {
    url: `${service.running.url}/v1/track`,
    headers: service.headers,
    template: purchaseTemplate(service.pixelId),
    connections,
  };
  await load({ ...target, seconds: 2 });
  // The profile's clock is the monotonic clock process.hrtime reads, in µs: the window's
  // bounds taken here select the measured samples.
  const from = nowUs();
  const measured = await withCpu([pid], () => load({ ...target, seconds }));
  const to = nowUs();
  const rss = peakRssMb(pid);
  await service.stop(); // SIGTERM: the service drains and exits, and node writes the profile
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('the service wrote no .cpuprofile');
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  if (from < profile.startTime || to > profile.endTime) {
    throw new Error('the load window is not inside the profile: clocks differ?');
  }
  const requests = measured.result.requests;
  const stages = stageTable(profile, requests, from, to);
  const rows: Array<Record<string, string>> = STAGES.map((stage) => ({
    stage,
    'µs/request': stages.perRequest[stage].toFixed(1),
    share: `${((100 * stages.perRequest[stage]) / stages.sampledPerRequest).toFixed(1)} %`,
  }));
  rows.push({
    stage: 'main thread, sampled',
    'µs/request': stages.sampledPerRequest.toFixed(1),
    share: '100 %',
  });
  rows.push({
    stage: 'whole process, /proc',
    'µs/request': measured.cpuPerRequest.toFixed(1),
    share: '',
  });
  console.log(
    `\nPOST /v1/track, SQLite${values['raw-http'] ? ', bare node:http (no Fastify)' : ''}, ${connections} connections, ${seconds} s under --cpu-prof: ` +
      `${measured.result.requestsPerSecond} req/s, ${requests} requests, peak RSS ${rss} MB; ` +
      `${pinned ? 'server pinned to core 1, load to core 0' : 'not pinned'}\n`,
  );
  console.log(table(rows));
  // What decided the biggest stages, and what no rule knew: where to look, and where the rules
  // may need a line.
  const biggest = [...STAGES]
    .filter((s) => s !== 'unattributed')
    .sort((a, b) => stages.perRequest[b] - stages.perRequest[a])
    .slice(0, 3);
  for (const stage of [...biggest, 'unattributed' as const]) {
    console.log(`\n${stage}, by the frame that decided it (µs/request):`);
    for (const f of stages.frames[stage].slice(0, 8)) {
      console.log(`  ${f.us.toFixed(2).padStart(6)}  ${f.frame}`);
    }
  }
  const saved = saveResult(values['raw-http'] ? 'profile-raw-http' : 'profile', {
    seconds,
    connections,
    pinned,
    loadAverage: loadavg().map((l) => Math.round(l * 10) / 10),
    note: values.note,
    requestsPerSecond: measured.result.requestsPerSecond,
    requests,
    processCpuUsPerRequest: Math.round(measured.cpuPerRequest * 10) / 10,
    peakRssMb: rss,
    stages: Object.fromEntries(STAGES.map((s) => [s, Math.round(stages.perRequest[s] * 10) / 10])),
    framesByStage: stages.frames,
  });
  const kept = saved.replace(/\.json$/, '.cpuprofile');
  copyFileSync(join(dir, file), kept);
  console.log(`\nresults: ${saved}\nprofile: ${kept}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
