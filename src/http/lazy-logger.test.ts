import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { createLogger } from '../logger.ts';
import { LazyChildLogger } from './lazy-logger.ts';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { lines, logger: createLogger('info', stream) };
}

describe('LazyChildLogger', () => {
  it('makes no child until something is logged', () => {
    const { logger } = capture();
    const child = new LazyChildLogger(logger, { reqId: 'r1' }, {});
    assert.equal(child.level, 'info');
    assert.equal(child.materialised, false);
    child.debug('below the level: nothing to write, so still no child');
    assert.equal(child.materialised, false);
    child.warn('at or above the level: now it is made');
    assert.equal(child.materialised, true);
  });

  it('writes what an eager child would: the bindings, the level, redaction', async () => {
    const { lines, logger } = capture();
    const lazy = new LazyChildLogger(logger, { reqId: 'r1' }, {});
    const eager = logger.child({ reqId: 'r1' });
    for (const log of [lazy, eager]) {
      log.warn({ secret: 'whsec_abc', n: 1 }, 'slow request');
      log.child({ step: 'x' }).error('failed');
    }
    await new Promise((resolve) => setImmediate(resolve));
    const strip = ({ time: _t, pid: _p, hostname: _h, ...rest }: Record<string, unknown>) => rest;
    assert.equal(lines.length, 4);
    assert.deepEqual(lines.slice(0, 2).map(strip), lines.slice(2).map(strip));
    assert.equal(lines[0]!['reqId'], 'r1');
    assert.equal(lines[0]!['secret'], '[redacted]');
    assert.equal(lines[1]!['step'], 'x');
  });

  it('follows a level set on it, and a child level given at birth', async () => {
    const { logger } = capture();
    const quiet = new LazyChildLogger(logger, { reqId: 'r2' }, { level: 'error' });
    assert.equal(quiet.level, 'error');
    const lazy = new LazyChildLogger(logger, { reqId: 'r3' }, {});
    lazy.level = 'debug';
    assert.equal(lazy.level, 'debug');
    assert.equal(logger.level, 'info');
    // Calls below the level, made or not, write nothing.
    const { lines, logger: parent } = capture();
    const strict = new LazyChildLogger(parent, { reqId: 'r4' }, { level: 'error' });
    strict.warn('dropped');
    strict.error('kept');
    strict.warn('dropped too');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      lines.map((l) => l['msg']),
      ['kept'],
    );
  });
});
