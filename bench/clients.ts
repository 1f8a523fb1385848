/**
 * The official clients' throughput beside @trackway/node's: events per second through
 * `track()` + `close()` (the client's defaults: batches of 100, gzip, one request in flight),
 * 30,000 events a round, into one real server (its own process, SQLite file, every check on),
 * all in the same run. Each client runs its scenario driver's `track` step (test/clients/),
 * the same events the shared scenario sends; Node runs the same loop in this process.
 * The machine is shared, so clients take turns, three rounds each, and the median counts.
 *
 *   npm run bench:clients -- [--events 30000] [--rounds 3]
 *
 * "in-process" is the time the driver measured around track() + close() (Python, Go; Node
 * here); "process" is the driver's wall time from spawn to exit, interpreter start included,
 * the only figure for a driver that does not report its own.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Trackway } from '../packages/node/src/index.ts';
import {
  type Command,
  DRIVERS,
  lastJson,
  run,
  step,
  unavailable,
} from '../test/clients/drivers.ts';
import { saveResult, startBenchService, table } from './lib.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '30000' },
    rounds: { type: 'string', default: '3' },
  },
});
const total = Number(values.events);
const roundCount = Number(values.rounds);

interface Measure {
  inProcess?: number;
  process: number;
  /** The client's CPU time (user + system) per 1,000 events, in ms. */
  cpuPer1000: number;
}

/** Runs `command` under sh, which reports its children's CPU time (`times`) on stderr. */
function timed(command: Command): Command {
  return {
    ...command,
    cmd: 'sh',
    args: ['-c', '"$0" "$@"; s=$?; times >&2; exit $s', command.cmd, ...command.args],
  };
}

/** Seconds of user + system time of sh's children, from the last line `times` printed. */
function childCpuSeconds(stderr: string): number {
  const last = stderr.trim().split('\n').at(-1) ?? '';
  const match = /^(\d+)m([\d.]+)s (\d+)m([\d.]+)s$/.exec(last);
  if (!match) throw new Error(`no times line in: ${stderr.slice(-500)}`);
  const [, um, us, sm, ss] = match;
  return Number(um) * 60 + Number(us) + Number(sm) * 60 + Number(ss);
}

async function node(url: string, apiKey: string, pixelId: string): Promise<Measure> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const trackway = new Trackway({ apiKey, baseUrl: url });
  for (let i = 0; i < total; i++) {
    void trackway.track({ pixel_id: pixelId, event_name: 'Purchase', value: i, currency: 'USD' });
  }
  const results = await trackway.close();
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const failed = results.filter((r) => !r.ok || r.deduplicated).length;
  if (failed > 0) throw new Error(`node: ${failed} events not newly stored`);
  return {
    inProcess: total / seconds,
    process: total / seconds,
    cpuPer1000: (used.user + used.system) / 1000 / (total / 1000),
  };
}

const available = DRIVERS.filter((driver) => {
  const reason = unavailable(driver);
  if (reason) console.error(`skipping ${driver.name}: ${reason}`);
  return !reason;
});
const commands = new Map(
  await Promise.all(available.map(async (d) => [d.name, await d.scenario()] as const)),
);

const loadBefore = loadavg()[0]!;
const dir = mkdtempSync(join(tmpdir(), 'trackway-bench-clients-'));
const service = await startBenchService(`sqlite:${join(dir, 'bench.db')}`);
try {
  const { url } = service.running;
  const apiKey = service.headers['authorization']!.replace('Bearer ', '');
  const external = async (name: string): Promise<Measure> => {
    const result = await run(
      timed(step(commands.get(name as never)!, 'track')),
      {
        TRACKWAY_URL: url,
        TRACKWAY_API_KEY: apiKey,
        PIXEL_ID: service.pixelId,
        COUNT: String(total),
      },
      '',
      600_000,
    );
    const out = lastJson<{ ok: number; failed: number; errors: string[]; seconds?: number }>(
      result,
    );
    if (result.code !== 0 || out.ok !== total) {
      throw new Error(`${name}: ${JSON.stringify(out)}\n${result.stderr.slice(-2000)}`);
    }
    return {
      ...(out.seconds !== undefined && { inProcess: total / out.seconds }),
      process: total / (result.ms / 1000),
      cpuPer1000: (childCpuSeconds(result.stderr) * 1000) / (total / 1000),
    };
  };
  const senders: Array<[string, () => Promise<Measure>]> = [
    ['node', () => node(url, apiKey, service.pixelId)],
    ...available.map((d): [string, () => Promise<Measure>] => [d.name, () => external(d.name)]),
  ];
  // A short warm-up each (JIT, SQLite pages, Go's build cache), not counted.
  for (const [name, send] of senders) {
    console.error(`warming up ${name}`);
    await send();
  }
  const rounds = new Map<string, Measure[]>(senders.map(([name]) => [name, []]));
  for (let round = 0; round < roundCount; round++) {
    for (const [name, send] of senders) {
      const measure = await send();
      rounds.get(name)!.push(measure);
      console.error(
        `round ${round + 1} ${name}: ${Math.round(measure.inProcess ?? measure.process)} events/s`,
      );
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const nodeRate = median(rounds.get('node')!.map((m) => m.inProcess!));
  const rows = [...rounds].map(([name, measures]) => {
    const inProcess = measures.every((m) => m.inProcess !== undefined)
      ? median(measures.map((m) => m.inProcess!))
      : undefined;
    const processRate = median(measures.map((m) => m.process));
    return {
      client: name,
      'events/s in-process (median)': inProcess === undefined ? '—' : Math.round(inProcess),
      'events/s process (median)': name === 'node' ? '—' : Math.round(processRate),
      'vs node': ((inProcess ?? processRate) / nodeRate).toFixed(2),
      'client CPU ms / 1,000 events (median)': median(measures.map((m) => m.cpuPer1000)).toFixed(1),
    };
  });
  const load = `load average ${loadBefore.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after, on ${cpus().length} cores`;
  const heading = `${total} events per round, ${roundCount} rounds, each client's defaults (batches of 100, gzip, 1 request in flight), one SQLite server`;
  console.log(`${heading}\n`);
  console.log(table(rows));
  const file = saveResult('clients', {
    events: total,
    rounds: roundCount,
    rows,
    measures: Object.fromEntries(rounds),
  });
  const date = new Date().toISOString().slice(0, 10);
  const md = new URL(`./results/clients-${date}.md`, import.meta.url);
  writeFileSync(
    md,
    `# Official clients: throughput beside @trackway/node (${date})\n\n` +
      '`npm run bench:clients` — events/s through `track()` + `close()`, ' +
      `${heading}; the server is one \`trackway serve\` process on a shared machine (${load}), ` +
      'so rounds vary and the ratio to Node is the figure to quote.\n\n' +
      `${mdTable(rows)}\n\n` +
      'The server is the bottleneck of every client here (one batch in flight, each batch one ' +
      'durable commit), so throughput says little about the clients themselves; their own CPU ' +
      'cost per 1,000 events (user + system, the interpreter start included for the ' +
      "external clients, and Node's measured in the bench process) tells them apart.\n\n" +
      '"in-process": 30,000 divided by the time the driver measured around its `track()` loop and ' +
      '`close()`; "process": divided by the driver process\'s wall time from spawn to exit ' +
      '(interpreter start and compilation included); "vs node" uses in-process where the driver ' +
      'reports it, else process.\n',
  );
  console.log(`\n${file}\n${md.pathname}`);
} finally {
  await service.stop();
  rmSync(dir, { recursive: true, force: true });
}

function mdTable(rows: Array<Record<string, string | number>>): string {
  const columns = Object.keys(rows[0] ?? {});
  return [
    `| ${columns.join(' | ')} |`,
    `|${columns.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${columns.map((c) => String(r[c])).join(' | ')} |`),
  ].join('\n');
}
