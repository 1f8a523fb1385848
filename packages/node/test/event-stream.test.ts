/** The `text/event-stream` parser on bytes cut at awkward places, as a network delivers them. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serverSentMessages } from '../src/event-stream.ts';

function body(...chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function all(stream: ReadableStream<Uint8Array>) {
  const out = [];
  for await (const message of serverSentMessages(stream)) out.push(message);
  return out;
}

describe('serverSentMessages', () => {
  it('reads id, event and multi-line data; skips comments and retry; any line ending', async () => {
    const messages = await all(
      body(
        'retry: 2000\n: connected\n\n',
        'id: 7\r\nevent: event\r\ndata: {"a":',
        '1}\r\n\r',
        '\nid: 8\revent: event\rdata: x\rdata: y\r\r',
        ': heartbeat\n\ndata:no space\n\n',
      ),
    );
    assert.deepEqual(messages, [
      { id: '7', event: 'event', data: '{"a":1}' },
      { id: '8', event: 'event', data: 'x\ny' },
      { id: '8', event: 'message', data: 'no space' },
    ]);
  });

  it('drops a message cut off by the end of the stream', async () => {
    assert.deepEqual(await all(body('id: 1\nevent: event\ndata: {"a"')), []);
  });

  it('splits a multi-byte character across chunks correctly', async () => {
    const bytes = new TextEncoder().encode('data: café\n\n');
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 10));
        controller.enqueue(bytes.slice(10));
        controller.close();
      },
    });
    assert.deepEqual(await all(stream), [{ id: undefined, event: 'message', data: 'café' }]);
  });
});
