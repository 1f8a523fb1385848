/** `plans set --retention-days` (enterprise only) and `trackway purge`, in process (contract §15). */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { tempDir } from '../../test/harness.ts';
import { main } from './main.ts';

const dir = tempDir();
after(() => dir.remove());
const env = { DATABASE_URL: `sqlite:${join(dir.path, 'cli.db')}`, LOG_LEVEL: 'silent' };

async function cli(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const sink = (add: (s: string) => void) =>
    new Writable({
      write(chunk, _encoding, done) {
        add(String(chunk));
        done();
      },
    });
  const code = await main(argv, {
    stdout: sink((s) => (stdout += s)),
    stderr: sink((s) => (stderr += s)),
    env,
  });
  return { code, stdout, stderr };
}

describe('trackway retention commands', () => {
  it('sets --retention-days on enterprise accounts only, with a non-zero exit otherwise', async () => {
    const pro = JSON.parse(
      (await cli('accounts', 'create', '--name', 'P', '--plan', 'pro', '--json')).stdout,
    );
    const refused = await cli(
      'plans',
      'set',
      '--account',
      pro.account_id,
      '--retention-days',
      '30',
      '--status',
      'past_due',
    );
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /enterprise/);
    // Refused whole: the status did not change either.
    const shown = JSON.parse(
      (await cli('accounts', 'show', '--account', pro.account_id, '--json')).stdout,
    );
    assert.equal(shown.status, 'active');
    const bad = await cli('plans', 'set', '--account', pro.account_id, '--retention-days', '0');
    assert.notEqual(bad.code, 0);

    const set = await cli(
      'plans',
      'set',
      '--account',
      pro.account_id,
      '--plan',
      'enterprise',
      '--retention-days',
      '30',
      '--json',
    );
    assert.equal(set.code, 0, set.stderr);
    assert.equal(JSON.parse(set.stdout).retention_days, 30);
    const plain = JSON.parse(
      (await cli('plans', 'set', '--account', pro.account_id, '--status', 'active', '--json'))
        .stdout,
    );
    assert.equal(plain.retention_days, 30);
  });

  it('purge runs at once and reports what it deleted', async () => {
    const res = await cli('purge', '--json');
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(JSON.parse(res.stdout), { deleted: 0, match_keys_erased: 0 });
    assert.match(
      (await cli('purge')).stdout,
      /^Purged 0 events past retention\. Erased the raw match keys of 0 events past 7 days\./,
    );
  });
});
