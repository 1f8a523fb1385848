/**
 * Durable commits on every Citus node: the decision on plain data, then (with
 * TRACKWAY_TEST_CITUS_URL at a Citus coordinator) the boot check against a real cluster,
 * with one worker's database default turned to `synchronous_commit = off` and back.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { ConfigError } from '../../config.ts';
import { nodesNotDurable, readNodeDurability } from './durable-nodes.ts';
import { PostgresStore } from './store.ts';

describe('which Citus nodes would not make a commit durable', () => {
  const durable = { synchronousCommit: 'on', fsync: 'on' };

  it('passes nodes that flush their own WAL before the commit returns', () => {
    assert.deepEqual(
      nodesNotDurable([
        { node: 'coordinator', ...durable },
        { node: 'worker a:5432', synchronousCommit: 'local', fsync: 'on' },
        { node: 'worker b:5432', synchronousCommit: 'remote_write', fsync: 'on' },
        { node: 'worker c:5432', synchronousCommit: 'remote_apply', fsync: 'on' },
      ]),
      [],
    );
  });

  it('names each worker with synchronous_commit off or fsync off, and why', () => {
    assert.deepEqual(
      nodesNotDurable([
        { node: 'coordinator', ...durable },
        { node: 'worker a:5432', synchronousCommit: 'off', fsync: 'on' },
        { node: 'worker b:5432', synchronousCommit: 'on', fsync: 'off' },
      ]),
      ['worker a:5432: synchronous_commit = off', 'worker b:5432: fsync = off'],
    );
  });

  it('counts a node it could not read as not durable, and the coordinator like any node', () => {
    assert.deepEqual(
      nodesNotDurable([
        { node: 'coordinator', synchronousCommit: 'on', fsync: 'off' },
        { node: 'worker a:5432', unreadable: 'connection refused' },
      ]),
      [
        'coordinator: fsync = off',
        'worker a:5432: settings could not be read (connection refused)',
      ],
    );
  });
});

const citusUrl = process.env['TRACKWAY_TEST_CITUS_URL'];

describe('boot on a real Citus cluster refuses a worker that would not flush its commits', {
  skip:
    citusUrl === undefined &&
    'TRACKWAY_TEST_CITUS_URL is not set (a Citus coordinator URL; Citus is not packaged here, see docs/deployment.md)',
}, () => {
  const url = citusUrl ?? '';

  it('reads every node, starts when all are durable, refuses while one worker is not', async () => {
    const coordinator = new pg.Pool({ connectionString: url, max: 1 });
    const { rows: workers } = await coordinator.query<{ nodename: string; nodeport: number }>(
      `SELECT nodename, nodeport FROM pg_dist_node
          WHERE noderole = 'primary' AND groupid <> 0 ORDER BY nodename, nodeport`,
    );
    assert.ok(workers.length > 0, 'the cluster has no worker');
    const nodes = await readNodeDurability(coordinator);
    assert.deepEqual(
      nodes?.map((n) => n.node),
      ['coordinator', ...workers.map((w) => `worker ${w.nodename}:${w.nodeport}`)],
    );
    await (await PostgresStore.open({ url, poolSize: 1 })).close();

    // One worker's database default: what the coordinator's new connections to it get.
    const first = workers[0]!;
    const target = new URL(url);
    target.hostname = first.nodename;
    target.port = String(first.nodeport);
    const worker = new pg.Client({ connectionString: target.toString() });
    await worker.connect();
    const database = target.pathname.slice(1);
    try {
      // Citus sends ALTER DATABASE from the coordinator to every node; with propagation off
      // for this session it changes this worker's default alone.
      await worker.query('SET citus.enable_ddl_propagation TO off');
      await worker.query(`ALTER DATABASE "${database}" SET synchronous_commit = off`);
      await assert.rejects(
        PostgresStore.open({ url, poolSize: 1 }),
        (error: Error) =>
          error instanceof ConfigError &&
          error.message.includes(
            `worker ${first.nodename}:${first.nodeport}: synchronous_commit = off`,
          ),
      );
    } finally {
      await worker
        .query(`ALTER DATABASE "${database}" RESET synchronous_commit`)
        .finally(() => Promise.all([worker.end(), coordinator.end()]));
    }
    const again = await PostgresStore.open({ url, poolSize: 1 });
    await again.close();
  });
});
