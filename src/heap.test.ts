import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HEAP_GROWING_PERCENT, heapGrowingFlag } from './heap.ts';

describe('heap growth bound', () => {
  it('is set when the operator chose none', () => {
    assert.equal(
      heapGrowingFlag(['--enable-source-maps', '--max-old-space-size=512']),
      `--heap-growing-percent=${HEAP_GROWING_PERCENT}`,
    );
  });

  it("leaves the operator's own choice on node's command line", () => {
    assert.equal(heapGrowingFlag(['--heap-growing-percent=300']), null);
    assert.equal(heapGrowingFlag(['--inspect', '--heap_growing_percent=50']), null);
  });
});
