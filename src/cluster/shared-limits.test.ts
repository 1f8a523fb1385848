import assert from 'node:assert/strict';
import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { rateLimiterContract } from '../rate-limit/rate-limiter.contract.ts';
import {
  type Channel,
  PrimaryLimits,
  SharedLimitsHost,
  type SharedMessage,
} from './shared-limits.ts';

const HOST = fileURLToPath(new URL('../../test/fixtures/shared-limits-host.ts', import.meta.url));

/** The HTTP process's end of a real IPC channel to a forked primary stand-in. */
function channelTo(child: ChildProcess): Channel {
  return {
    send: (message, done) => child.send(message, done),
    on: (event, listener) => child.on(event, listener),
  };
}

let child: ChildProcess | undefined;
rateLimiterContract({
  name: 'through the primary (node:cluster IPC)',
  async open() {
    child = fork(HOST, { stdio: 'inherit' });
    await once(child, 'spawn');
    return new PrimaryLimits(channelTo(child));
  },
  async close() {
    child?.disconnect();
    if (child && child.exitCode === null) await once(child, 'exit');
  },
});

/** Two ends in this process: what one sends, the other hears a turn later, as over IPC. */
function pair(): [Channel, Channel] {
  const listeners: Array<Array<(message: unknown) => void>> = [[], []];
  const end = (mine: number): Channel => ({
    send(message: SharedMessage, done) {
      const copy = JSON.parse(JSON.stringify(message)) as unknown;
      setImmediate(() => {
        for (const listener of listeners[1 - mine]!) listener(copy);
        done(null);
      });
    },
    on(_event, listener) {
      listeners[mine]!.push(listener);
    },
  });
  return [end(0), end(1)];
}

describe('stream slots through the primary', () => {
  it('counts every process against one limit, and frees the slots of a process that exits', async () => {
    const host = new SharedLimitsHost();
    const [a, hostA] = pair();
    const [b, hostB] = pair();
    const first = host.attach(hostA);
    host.attach(hostB);
    const one = new PrimaryLimits(a);
    const two = new PrimaryLimits(b);
    for (let i = 0; i < 10; i++) assert.equal(await one.acquire('acct_1', `a${i}`), true);
    for (let i = 0; i < 10; i++) assert.equal(await two.acquire('acct_1', `b${i}`), true);
    assert.equal(await two.acquire('acct_1', 'b10'), false, 'the 21st stream of the account');
    assert.equal(await two.acquire('acct_2', 'c0'), true, 'another account is not affected');
    first.detached();
    assert.equal(await two.acquire('acct_1', 'b10'), true, 'freed by the exit of the first');
  });

  it('fails a call whose message cannot leave (the primary is gone) instead of hanging', async () => {
    const closed: Channel = {
      send: (_message, done) => setImmediate(() => done(new Error('channel closed'))),
      on: () => {},
    };
    const limits = new PrimaryLimits(closed);
    await assert.rejects(
      limits.consume('acct_1', [{ window: 'minute', limit: 5 }], new Date()),
      /shutting down/,
    );
  });
});
