/**
 * deploy/trackway.service as systemd reads it: `systemd-analyze verify` must accept it
 * without a single complaint (it exits 0 even for unknown keys and bad values, so any output
 * fails), and the hardening the deployment guide promises must be there.
 * Needs systemd-analyze (Debian's `systemd` package; .ci/run installs it). Without it the
 * verify step is skipped with a warning, except under CI.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const UNIT = fileURLToPath(new URL('../deploy/trackway.service', import.meta.url));

function verifySkip(): string | false {
  if (spawnSync('systemd-analyze', ['--version']).error === undefined) return false;
  if (process.env['CI']) {
    throw new Error('systemd-analyze is missing; CI requires it (.ci/run installs it)');
  }
  process.stderr.write('warning: systemd-analyze not found; skipping the unit file check\n');
  return 'systemd-analyze not installed';
}

describe('deploy/trackway.service', () => {
  it('passes `systemd-analyze verify` with no warning', { skip: verifySkip() }, () => {
    const res = spawnSync('systemd-analyze', ['verify', UNIT], { encoding: 'utf8' });
    assert.equal(res.status, 0, res.stderr);
    assert.equal(`${res.stdout}${res.stderr}`.trim(), '');
  });

  it('runs the compiled server, restarts on failure and is hardened', () => {
    const settings = new Map<string, string[]>();
    for (const line of readFileSync(UNIT, 'utf8').split('\n')) {
      const match = /^([A-Za-z]+)=(.*)$/.exec(line);
      if (match) settings.set(match[1]!, [...(settings.get(match[1]!) ?? []), match[2]!]);
    }
    const one = (key: string) => settings.get(key)?.at(-1);
    assert.match(one('ExecStart') ?? '', /^\/usr\/bin\/node \S+\/bin\/trackway\.js serve$/);
    assert.equal(one('Restart'), 'on-failure');
    assert.equal(one('KillSignal'), 'SIGTERM');
    assert.equal(one('StateDirectory'), 'trackway');
    assert.ok(one('DynamicUser') === 'yes' || one('User') !== undefined, 'runs unprivileged');
    assert.equal(one('ProtectSystem'), 'strict');
    assert.equal(one('NoNewPrivileges'), 'yes');
    assert.equal(one('CapabilityBoundingSet'), '');
    assert.match(one('EnvironmentFile') ?? '', /^-?\/etc\/trackway\/trackway\.env$/);
    assert.match(one('Environment') ?? '', /DATABASE_URL=sqlite:\/var\/lib\/trackway\//);
  });
});
