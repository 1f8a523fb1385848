import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { createSender } from './sender.ts';

describe('webhook sender', () => {
  it('logs a receiver that never answers as a plain timeout', async () => {
    const silent = createServer(() => {}); // takes the request, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const sender = createSender(
      { allowPrivate: true, allowHttp: true },
      { connectMs: 1_000, totalMs: 300 },
    );
    try {
      const result = await sender.send(`http://127.0.0.1:${port}/hook`, {}, '{}');
      assert.equal(result.statusCode, null);
      // Not "23: Timed out…": the AbortSignal's DOMException code means nothing to a reader.
      assert.equal(result.error, 'Timed out after 0.3 s');
    } finally {
      silent.closeAllConnections();
      silent.close();
      await sender.close();
    }
  });
});
