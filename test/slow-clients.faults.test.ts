/**
 * Slow clients (issue 7): a slowloris connection that trickles its headers, and one that
 * trickles its body, are cut off by the server's header (10 s) and request (30 s) timeouts,
 * while ordinary requests go on being served. Real process, raw sockets.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { tempDir } from './harness.ts';
import { type ServerProcess, startServerProcess } from './process.ts';

/** Writes `first`, then one `drip` every 500 ms until the server closes the socket. */
async function trickle(url: string, first: string, drip: string) {
  const { hostname, port } = new URL(url);
  const socket: Socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  const started = Date.now();
  let answer = '';
  socket.on('data', (d) => {
    answer += d;
  });
  socket.on('error', () => {});
  socket.write(first);
  const timer = setInterval(() => socket.write(drip), 500);
  await once(socket, 'close');
  clearInterval(timer);
  return { ms: Date.now() - started, answer };
}

describe('slow clients are cut off (real process)', () => {
  const dir = tempDir();
  let server: ServerProcess;
  before(async () => {
    server = await startServerProcess({ DATABASE_URL: `sqlite:${join(dir.path, 'slow.db')}` });
  });
  after(async () => {
    await server.stop();
    dir.remove();
  });

  it('closes a connection trickling its headers after the 10 s header timeout', async () => {
    const slow = trickle(server.url, 'POST /v1/track HTTP/1.1\r\nHost: x\r\n', 'X-Drip: 1\r\n');
    // Meanwhile the server answers others at once.
    await sleep(2_000);
    const health = await fetch(`${server.url}/healthz`);
    assert.equal(health.status, 200);
    const { ms, answer } = await slow;
    assert.ok(ms >= 9_000 && ms < 13_000, `closed after ${ms} ms`);
    assert.match(answer, /^HTTP\/1\.1 408/);
    assert.ok(
      answer.endsWith('{"error":"Request timeout","message":"The request did not arrive in time"}'),
    );
    console.log(`slow clients: header trickle closed after ${ms} ms with 408`);
  });

  it('closes a connection trickling its body after the 30 s request timeout', async () => {
    const head =
      'POST /v1/track HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
      'Content-Length: 10000\r\n\r\n{';
    const { ms, answer } = await trickle(server.url, head, ' ');
    assert.ok(ms >= 29_000 && ms < 33_000, `closed after ${ms} ms`);
    // (Without a key the 401 is sent at once; the connection still has to go.)
    assert.match(answer, /HTTP\/1\.1 408 Request Timeout\r\n/);
    assert.ok(
      answer.endsWith('{"error":"Request timeout","message":"The request did not arrive in time"}'),
    );
    console.log(`slow clients: body trickle closed after ${ms} ms with 408`);
  });
});
