/**
 * A SQLite file that cannot be written stops the start with one line naming the path and the
 * user (issue 30), for the file, its -wal, its -shm and its directory.
 *
 * The suite runs as root in CI, and permission bits do not stop root: the unwritable paths
 * here are made immutable (`chattr +i`, which stops root too, on ext4 and most Linux
 * filesystems). Where that cannot be done (no chattr, a filesystem without the flag) the cases
 * are skipped, except under CI, where they fail.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tempDir } from '../../../test/harness.ts';
import { openSqlite } from './database.ts';
import { prepareSqlitePath } from './writable.ts';

const dir = tempDir('trackway-writable-');
const frozen: string[] = [];

function chattr(flag: '+i' | '-i', path: string): boolean {
  return spawnSync('chattr', [flag, path], { stdio: 'ignore' }).status === 0;
}

/** Makes `path` unwritable even for root; false when this machine cannot. */
function freeze(path: string): boolean {
  if (!chattr('+i', path)) return false;
  frozen.push(path);
  return true;
}

after(() => {
  for (const path of frozen) chattr('-i', path);
  dir.remove();
});

const user = (() => {
  const { username, uid } = userInfo();
  return `${username} (uid ${uid})`;
})();

/** What prepareSqlitePath (and openSqlite) refuse with, as one line. */
function refusal(path: string): string {
  try {
    prepareSqlitePath(path);
  } catch (error) {
    assert.equal((error as Error).name, 'ConfigError');
    return (error as Error).message;
  }
  assert.fail(`${path} was accepted`);
}

describe('the SQLite file must be writable before the store opens (issue 30)', () => {
  const canFreeze = (() => {
    const probe = join(dir.path, 'probe');
    writeFileSync(probe, '');
    const ok = chattr('+i', probe);
    if (ok) chattr('-i', probe);
    return ok;
  })();
  const needsFreeze = (t: { skip(reason: string): void }) => {
    if (canFreeze) return false;
    assert.ok(!process.env.CI, 'CI: chattr +i must work here to test unwritable files as root');
    t.skip('chattr +i is not available on this filesystem');
    return true;
  };

  for (const suffix of ['', '-wal', '-shm']) {
    it(`refuses a database whose ${suffix || 'file'} cannot be written, naming it and the user`, (t) => {
      if (needsFreeze(t)) return;
      const db = join(dir.path, `file${suffix || '-main'}`, 't.db');
      openSqlite(db).close();
      // Left behind by a crash, say: SQLite would open and write them.
      writeFileSync(`${db}-wal`, '');
      writeFileSync(`${db}-shm`, '');
      assert.ok(freeze(`${db}${suffix}`));
      const message = refusal(db);
      assert.equal(
        message,
        `SQLite database ${db}: ${db}${suffix} is not writable (EPERM: operation not permitted), running as user ${user}; give that user write access there or set DATABASE_URL to another path`,
      );
      assert.throws(() => openSqlite(db), { name: 'ConfigError', message });
    });
  }

  it('refuses a directory it cannot create files in, new database or existing', (t) => {
    if (needsFreeze(t)) return;
    const empty = join(dir.path, 'frozen-empty');
    const existing = join(dir.path, 'frozen-existing');
    openSqlite(join(existing, 't.db')).close();
    prepareSqlitePath(join(empty, 't.db'));
    assert.ok(freeze(empty) && freeze(existing));
    for (const folder of [empty, existing]) {
      assert.match(
        refusal(join(folder, 't.db')),
        new RegExp(
          `^SQLite database ${folder}/t\\.db: cannot create files in its directory ${folder} \\(EPERM: [^)]+\\), running as user ${user.replace(/[()]/g, '\\$&')};`,
        ),
      );
    }
  });

  it('makes missing directories, one level at a time, and leaves no trace of its check', () => {
    const db = join(dir.path, 'a', 'b', 'c', 't.db');
    prepareSqlitePath(db);
    assert.deepEqual(readdirSync(join(dir.path, 'a', 'b', 'c')), []);
    openSqlite(db).close();
  });

  it('answers at once for a directory nothing can be made in (Node’s recursive mkdir spins)', () => {
    const started = performance.now();
    assert.equal(
      refusal('/proc/nope/t.db'),
      `SQLite database /proc/nope/t.db: cannot create the directory /proc/nope (ENOENT: no such file or directory), running as user ${user}; give that user write access there or set DATABASE_URL to another path`,
    );
    assert.ok(performance.now() - started < 1_000);
  });

  it('names a file standing where a directory should be', () => {
    const file = join(dir.path, 'plain-file');
    writeFileSync(file, '');
    assert.match(refusal(join(file, 't.db')), /its directory \S+plain-file \(ENOTDIR: /);
    assert.match(refusal(join(file, 'x', 't.db')), /cannot reach \S+plain-file\/x \(ENOTDIR: /);
  });
});
