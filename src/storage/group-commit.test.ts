/**
 * A batch stored in several transactions (PostgreSQL's per-account path) that partly commits:
 * what committed keeps its result, an item that failed alone keeps its failure, and only the
 * others are committed again, one per transaction, in order.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GroupCommit, PartlyCommitted } from './group-commit.ts';

describe('GroupCommit with a partly committed batch', () => {
  it('retries alone only the items whose transaction failed with others', async () => {
    const commits: string[][] = [];
    const refused = new Error('refused');
    const batches = new GroupCommit<string, string>((items) => {
      commits.push(items);
      if (items.length === 1) {
        if (items[0] === 'b2') throw refused;
        return [`alone ${items[0]}`];
      }
      // Account a committed; b's transaction (b1, b2) failed; c was alone in its own.
      throw new PartlyCommitted<string>(
        items.map((item) =>
          item.startsWith('a')
            ? { status: 'fulfilled', value: `batch ${item}` }
            : item === 'c'
              ? { status: 'rejected', reason: refused }
              : undefined,
        ),
      );
    }, 10);
    const results = await batches.submit(['a1', 'b1', 'c', 'a2', 'b2']);
    assert.deepEqual(results, [
      { status: 'fulfilled', value: 'batch a1' },
      { status: 'fulfilled', value: 'alone b1' },
      { status: 'rejected', reason: refused },
      { status: 'fulfilled', value: 'batch a2' },
      { status: 'rejected', reason: refused },
    ]);
    assert.deepEqual(commits, [['a1', 'b1', 'c', 'a2', 'b2'], ['b1'], ['b2']]);
    assert.equal(batches.failedBatches, 1);
  });
});
