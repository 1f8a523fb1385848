/**
 * `trackway serve` on every core (TRACKWAY_PROCESSES): this primary process forks the HTTP
 * processes with node:cluster, which share one listening port, and does nothing on the request
 * path but count limits for them when there is no Redis (shared-limits.ts). Each HTTP process is
 * a whole `serve` (store, group commit, delivery workers, purge), as one instance of several on
 * one PostgreSQL database already is (README "Running on PostgreSQL"): deduplication is the
 * database's unique constraint, delivery claims are `FOR UPDATE SKIP LOCKED`, a live tail hears
 * every process through LISTEN/NOTIFY, and each process answers 200 only after its own durable
 * commit. So a process killed outright loses only requests it had not answered; the primary
 * starts another in its place. SIGTERM (or SIGINT) is passed on to every process, each drains
 * as a single `serve` does, and the primary exits once all have.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import { type Channel, SharedLimitsHost } from './shared-limits.ts';

/** An HTTP process tells the primary it listens (on the port they all share). */
export interface ListeningMessage {
  tw: 'listening';
  url: string;
}

const isListening = (message: unknown): message is ListeningMessage =>
  typeof message === 'object' &&
  message !== null &&
  (message as { tw?: unknown }).tw === 'listening';

const isMetricsRequest = (message: unknown): message is { tw: 'metrics'; id: number } =>
  typeof message === 'object' && message !== null && (message as { tw?: unknown }).tw === 'metrics';

/** A replacement that fails to start is tried again after this long, doubling to a minute. */
const RESTART_DELAY_MS = 1_000;
const MAX_RESTART_DELAY_MS = 60_000;

export interface RunningPrimary {
  url: string;
  /** Passes SIGTERM to every process and resolves once all have drained and exited. */
  close(): Promise<void>;
}

function channelOf(worker: Worker): Channel {
  return {
    send: (message, done) => worker.send(message, done),
    on: (event, listener) => worker.on(event, listener),
  };
}

/**
 * Forks `count` HTTP processes and resolves once every one listens. If one of those first
 * processes exits before it listens (a bad HOST, the database unreachable …: it has printed
 * why), the others are stopped and this rejects. Later, a process that exits unasked is
 * replaced.
 */
export function startPrimary(count: number, logger: Logger): Promise<RunningPrimary> {
  const host = new SharedLimitsHost();
  // Answers every process's `/metrics` with all of theirs: a scrape lands on any of them.
  const aggregator = new AggregatorRegistry();
  const live = new Set<Worker>();
  let started = false;
  let stopping: Promise<void> | undefined;
  let restartDelay = RESTART_DELAY_MS;
  const exited: Array<{ code: number | null; signal: string | null }> = [];
  let allExited: () => void = () => {};

  return new Promise<RunningPrimary>((resolve, reject) => {
    let listening = 0;
    let url = '';
    const stopAll = (): Promise<void> => {
      stopping ??= new Promise<void>((done) => {
        allExited = done;
        if (live.size === 0) done();
        for (const worker of live) worker.process.kill('SIGTERM');
      });
      return stopping;
    };
    const fork = (): void => {
      const worker = cluster.fork();
      live.add(worker);
      const link = host.attach(channelOf(worker));
      let up = false;
      worker.on('message', (message: unknown) => {
        if (isMetricsRequest(message)) {
          const answer = (text: string) =>
            worker.send({ tw: 'metrics', id: message.id, text }, () => {});
          aggregator.clusterMetrics().then(answer, (error: Error) => {
            logger.warn({ err: error }, 'metrics of the HTTP processes could not be gathered');
            answer('');
          });
          return;
        }
        if (!isListening(message) || up) return;
        up = true;
        restartDelay = RESTART_DELAY_MS;
        if (started) {
          logger.info({ pid: worker.process.pid }, 'HTTP process replaced and listening');
          return;
        }
        url = message.url;
        if (++listening === count) {
          started = true;
          resolve({ url, close: stopAll });
        }
      });
      worker.on('exit', (code, signal) => {
        live.delete(worker);
        link.detached();
        if (stopping) {
          exited.push({ code, signal });
          if (live.size === 0) allExited();
          return;
        }
        if (!started) {
          // One of the first processes could not start: it has said why on stderr.
          void stopAll().then(() =>
            reject(new Error(`an HTTP process exited before listening (exit code ${code})`)),
          );
          return;
        }
        logger.error(
          { pid: worker.process.pid, code, signal },
          'HTTP process exited; starting another',
        );
        if (up) fork();
        else {
          setTimeout(() => {
            if (!stopping) fork();
          }, restartDelay).unref();
          restartDelay = Math.min(restartDelay * 2, MAX_RESTART_DELAY_MS);
        }
      });
    };
    for (let n = 0; n < count; n++) fork();
  }).then((running) => ({
    url: running.url,
    async close() {
      await running.close();
      const failed = exited.filter((e) => e.code !== 0);
      if (failed.length > 0) {
        throw new Error(`${failed.length} HTTP process(es) did not drain cleanly`);
      }
    },
  }));
}
