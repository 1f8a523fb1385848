/**
 * A 200 from `/v1/track` means the event is on disk (contract §3). On plain PostgreSQL each
 * connection raises `synchronous_commit = off` to `on` (database.ts, DURABLE_COMMITS), which is
 * enough: the commit is flushed where it is made. On Citus a transaction commits on every
 * worker whose shards it touched, over the coordinator's own connections to them, and those
 * sessions take the WORKER's settings: Citus does not pass the coordinator's
 * `synchronous_commit` on (nor could anything fix a worker's `fsync = off`). A worker set to
 * `off` would acknowledge events a crash of that worker then loses, silently.
 *
 * So at boot, when the `citus` extension is there, the coordinator's setting (as this
 * service's sessions see it) and every worker's (as a new session in this database, as this
 * user, sees it: what the coordinator's connections get) are read, and the service refuses to
 * start while any node would answer before its commit is flushed.
 */
import type pg from 'pg';
import { ConfigError } from '../../config.ts';

/** One node's settings as read, or why they could not be read. */
export interface NodeDurability {
  /** `coordinator`, or a worker's `host:port`. */
  node: string;
  synchronousCommit?: string;
  fsync?: string;
  /** Set when the node could not be asked (down, refused the connection, …). */
  unreadable?: string;
}

/**
 * Each node that would not make a commit durable, with the reason, in words an operator acts
 * on; empty when every node would. `local` and the synchronous-standby levels (`remote_write`,
 * `remote_apply`) all flush the node's own WAL before the commit returns; only `off` does not.
 * A node that could not be read counts as not durable: nothing says it is.
 */
export function nodesNotDurable(nodes: readonly NodeDurability[]): string[] {
  const problems: string[] = [];
  for (const n of nodes) {
    if (n.unreadable !== undefined) {
      problems.push(`${n.node}: settings could not be read (${n.unreadable})`);
      continue;
    }
    if (n.synchronousCommit === 'off') problems.push(`${n.node}: synchronous_commit = off`);
    if (n.fsync !== 'on') problems.push(`${n.node}: fsync = ${n.fsync ?? 'unknown'}`);
  }
  return problems;
}

/** The query each worker answers: both settings, as one line (run_command_on_workers: text). */
const SETTINGS = "SELECT current_setting('synchronous_commit') || ' ' || current_setting('fsync')";

/**
 * Every node's settings when the database has the `citus` extension; null on plain
 * PostgreSQL (nothing to read beyond what each connection already raises).
 */
export async function readNodeDurability(pool: pg.Pool): Promise<NodeDurability[] | null> {
  const { rows } = await pool.query<{ citus: boolean; settings: string }>(
    `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS citus,
            (${SETTINGS}) AS settings`,
  );
  const coordinator = rows[0];
  if (!coordinator?.citus) return null;
  const nodes = [parse('coordinator', coordinator.settings)];
  const workers = await pool.query<{
    nodename: string;
    nodeport: number;
    success: boolean;
    result: string;
  }>(
    `SELECT nodename, nodeport, success, result FROM run_command_on_workers($1)
      ORDER BY nodename, nodeport`,
    [SETTINGS],
  );
  for (const w of workers.rows) {
    const node = `worker ${w.nodename}:${w.nodeport}`;
    nodes.push(w.success ? parse(node, w.result) : { node, unreadable: w.result });
  }
  return nodes;
}

function parse(node: string, settings: string): NodeDurability {
  const [synchronousCommit, fsync] = settings.split(' ');
  return {
    node,
    ...(synchronousCommit !== undefined && { synchronousCommit }),
    ...(fsync !== undefined && { fsync }),
  };
}

/**
 * Refuses to start (ConfigError, as any setting the service cannot run with) when a Citus
 * node would not make a commit durable; does nothing on plain PostgreSQL.
 */
export async function requireDurableNodes(pool: pg.Pool): Promise<void> {
  const nodes = await readNodeDurability(pool);
  if (nodes === null) return;
  const problems = nodesNotDurable(nodes);
  if (problems.length === 0) return;
  throw new ConfigError(
    `Citus: a 200 means the event is on disk, but ${problems.join('; ')}. Set synchronous_commit = on (or local) and fsync = on in postgresql.conf on every node (and remove any ALTER DATABASE/ROLE ... SET synchronous_commit = off there), then restart Trackway.`,
  );
}
