/**
 * The CLI's command line, in process: what each mistake prints, where, and with which exit
 * code; `--json` everywhere; usage only when asked for or after a usage error, and then only
 * the part that concerns the command.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { tempDir } from '../../test/harness.ts';
import { main } from './main.ts';

function sink() {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += chunk;
      done();
    },
  });
  return { stream, text: () => text };
}

const dir = tempDir();
after(() => dir.remove());
const env = { DATABASE_URL: `sqlite:${join(dir.path, 'cli.db')}`, LOG_LEVEL: 'silent' };

async function cli(...argv: string[]) {
  const stdout = sink();
  const stderr = sink();
  const code = await main(argv, { stdout: stdout.stream, stderr: stderr.stream, env });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

describe('trackway help and usage', () => {
  it('`help` and `--help` print the whole usage on stdout and exit 0', async () => {
    for (const argv of [['help'], ['--help'], ['-h']]) {
      const res = await cli(...argv);
      assert.equal(res.code, 0, argv.join(' '));
      assert.equal(res.stderr, '');
      for (const command of ['serve', 'accounts create', 'keys revoke', 'plans set', 'openapi']) {
        assert.ok(res.stdout.includes(`trackway ${command}`), `${argv}: ${command}`);
      }
    }
  });

  it('`help <group>`, `<group> --help` and `<command> --help` print only that part', async () => {
    for (const argv of [
      ['help', 'keys'],
      ['keys', '--help'],
    ]) {
      const res = await cli(...argv);
      assert.equal(res.code, 0);
      assert.match(res.stdout, /trackway keys create/);
      assert.match(res.stdout, /trackway keys list/);
      assert.doesNotMatch(res.stdout, /accounts|plans set|serve/);
    }
    const one = await cli('keys', 'revoke', '--help');
    assert.equal(one.code, 0);
    assert.match(one.stdout, /trackway keys revoke --key-id K/);
    assert.doesNotMatch(one.stdout, /keys list|keys create/);
  });

  it('a group alone is a usage error that shows that group only, on stderr', async () => {
    const res = await cli('accounts');
    assert.equal(res.code, 2);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /^accounts needs one of: create, list, show\n/);
    assert.match(res.stderr, /trackway accounts create --name N --plan P/);
    assert.doesNotMatch(res.stderr, /trackway keys|plans set|trackway serve/);
  });

  it('a missing option shows that command’s usage, not the whole list', async () => {
    const res = await cli('keys', 'list');
    assert.equal(res.code, 2);
    assert.match(
      res.stderr,
      /^--account is required\n\nUsage:\n {2}trackway keys list --account A/,
    );
    assert.doesNotMatch(res.stderr, /keys create|accounts|serve/);
  });

  it('an unknown command names itself and where to look, without the usage', async () => {
    const res = await cli('acounts');
    assert.equal(res.code, 2);
    assert.equal(res.stderr, 'Unknown command: acounts (run "trackway help" for the list)\n');
  });

  it('refuses options the command does not take rather than ignoring them', async () => {
    const res = await cli('keys', 'list', '--account', 'acct_x', '--plan', 'pro');
    assert.equal(res.code, 2);
    assert.match(res.stderr, /^keys list does not take --plan\n/);
    const unknown = await cli('keys', 'list', '--acount', 'acct_x');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^Unknown option '--acount'\n/);
    assert.match(unknown.stderr, /trackway keys list --account A/);
    assert.doesNotMatch(unknown.stderr, /keys create/);
  });

  it('no command at all is a usage error with the whole usage on stderr', async () => {
    const res = await cli();
    assert.equal(res.code, 2);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /^No command given\n\nUsage:/);
  });
});

describe('trackway --json', () => {
  it('--help --json prints one JSON object listing the commands', async () => {
    const res = await cli('--help', '--json');
    assert.equal(res.code, 0);
    const body = JSON.parse(res.stdout);
    assert.ok(body.commands.some((c: { command: string }) => c.command === 'plans set'));
    assert.equal(typeof body.usage, 'string');
    const group = JSON.parse((await cli('help', 'keys', '--json')).stdout);
    assert.deepEqual(
      group.commands.map((c: { command: string }) => c.command),
      ['keys create', 'keys list', 'keys revoke'],
    );
  });

  it('usage errors are one JSON object on stderr, with the relevant usage', async () => {
    const res = await cli('keys', 'list', '--json');
    assert.equal(res.code, 2);
    assert.equal(res.stdout, '');
    const body = JSON.parse(res.stderr);
    assert.equal(body.error, 'Invalid usage');
    assert.equal(body.message, '--account is required');
    assert.match(body.usage, /trackway keys list --account A/);
    const unknown = JSON.parse((await cli('nope', '--json')).stderr);
    assert.deepEqual(Object.keys(unknown).sort(), ['error', 'message']);
  });

  it('operator errors are one JSON object on stderr with exit 1', async () => {
    const res = await cli('keys', 'list', '--account', 'acct_nope', '--json');
    assert.equal(res.code, 1);
    assert.equal(res.stdout, '');
    assert.deepEqual(JSON.parse(res.stderr), {
      error: 'Invalid request',
      message: 'No such account: acct_nope',
    });
  });

  it('configuration errors too', async () => {
    const stderr = sink();
    const code = await main(['migrate', '--json'], {
      stdout: sink().stream,
      stderr: stderr.stream,
      env: { DATABASE_URL: 'mysql://nope' },
    });
    assert.equal(code, 1);
    assert.equal(JSON.parse(stderr.text()).error, 'Invalid configuration');
  });
});

describe('trackway accounts list', () => {
  it('lists every account as text and JSON, keys never shown', async () => {
    const a = JSON.parse(
      (await cli('accounts', 'create', '--name', 'First', '--plan', 'pro', '--json')).stdout,
    );
    const b = JSON.parse(
      (await cli('accounts', 'create', '--name', 'Second', '--plan', 'ultra', '--json')).stdout,
    );
    const res = await cli('accounts', 'list', '--json');
    assert.equal(res.code, 0, res.stderr);
    const { accounts } = JSON.parse(res.stdout);
    const ids = accounts.map((x: { account_id: string }) => x.account_id);
    // Both made within the same millisecond, maybe: the order is the contract suite's to check.
    assert.ok(ids.includes(a.account_id) && ids.includes(b.account_id));
    assert.deepEqual(Object.keys(accounts[0]).sort(), [
      'account_id',
      'created_at',
      'id',
      'limits',
      'name',
      'plan',
      'status',
    ]);
    const second = accounts.find((x: { account_id: string }) => x.account_id === b.account_id);
    assert.equal(second.plan, 'ultra');
    assert.ok(!res.stdout.includes(a.api_key) && !res.stdout.includes(b.api_key));
    const text = await cli('accounts', 'list');
    assert.match(
      text.stdout,
      new RegExp(`^${b.account_id}  ultra  active  created \\S+  Second$`, 'm'),
    );
  });
});

describe('trackway accounts show', () => {
  it('shows plan, status, limits and keys (prefixes only), as text and JSON', async () => {
    const made = JSON.parse(
      (await cli('accounts', 'create', '--name', 'Acme', '--plan', 'pro', '--json')).stdout,
    );
    const res = await cli('accounts', 'show', '--account', made.account_id, '--json');
    assert.equal(res.code, 0, res.stderr);
    const body = JSON.parse(res.stdout);
    assert.equal(body.account_id, made.account_id);
    assert.equal(body.name, 'Acme');
    assert.equal(body.plan, 'pro');
    assert.equal(body.status, 'active');
    assert.deepEqual(body.limits, { requests_per_minute: 500, daily_limit: 720000 });
    assert.equal(body.keys.length, 1);
    assert.ok(!res.stdout.includes(made.api_key), 'the key itself is never shown again');
    const text = await cli('accounts', 'show', '--account', made.account_id);
    assert.match(text.stdout, new RegExp(`^${made.account_id}  Acme\n  plan pro, status active`));
    const missing = await cli('accounts', 'show', '--account', 'acct_nope');
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, 'No such account: acct_nope\n');
  });
});

describe('trackway keys create', () => {
  it('names and scopes the key, as POST /v1/keys does, and lists them', async () => {
    const made = JSON.parse(
      (await cli('accounts', 'create', '--name', 'Keys', '--plan', 'pro', '--json')).stdout,
    );
    const res = await cli(
      'keys',
      'create',
      '--account',
      made.account_id,
      '--name',
      ' Checkout server ',
      '--scope',
      'ingest',
      '--json',
    );
    assert.equal(res.code, 0, res.stderr);
    const created = JSON.parse(res.stdout);
    assert.equal(created.name, 'Checkout server');
    assert.equal(created.scope, 'ingest');
    assert.match(created.api_key, /^tw_/);
    const plain = await cli('keys', 'create', '--account', made.account_id, '--name', 'Ops');
    assert.match(plain.stdout, /^Created key key_\S+ "Ops" \(scope full\) for acct_/);

    const listed = JSON.parse(
      (await cli('keys', 'list', '--account', made.account_id, '--json')).stdout,
    );
    const byId = (id: string) =>
      listed.keys.find((k: { key_id: string }) => k.key_id === id) as Record<string, unknown>;
    assert.equal(byId(created.key_id)['name'], 'Checkout server');
    assert.equal(byId(created.key_id)['scope'], 'ingest');
    assert.equal(listed.keys.length, 3, 'the first key, unnamed and full, and the two new ones');
    assert.deepEqual(
      // Made within one millisecond, maybe: the order is the contract suite's to check.
      listed.keys.map((k: { name: string; scope: string }) => [k.name, k.scope]).sort(),
      [
        ['', 'full'],
        ['Checkout server', 'ingest'],
        ['Ops', 'full'],
      ],
    );
    const text = await cli('keys', 'list', '--account', made.account_id);
    assert.match(text.stdout, / {2}ingest {2}created \S+ {2}Checkout server\n/);
  });

  it('refuses a scope it does not know and an empty name, with the command usage', async () => {
    const bad = await cli('keys', 'create', '--account', 'acct_x', '--scope', 'admin');
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      /^--scope must be one of full, ingest\n\nUsage:\n {2}trackway keys create/,
    );
    const empty = await cli('keys', 'create', '--account', 'acct_x', '--name', '  ');
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /^--name must be 1 to 100 characters\n/);
  });
});

describe('what testers from outside tripped on (issue 30)', () => {
  it('--version prints the version, as text and JSON', async () => {
    const { version } = JSON.parse(
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    const text = await cli('--version');
    assert.deepEqual(text, { code: 0, stdout: `trackway ${version}\n`, stderr: '' });
    const json = await cli('--version', '--json');
    assert.deepEqual(JSON.parse(json.stdout), { version });
    const withCommand = await cli('keys', 'list', '--version');
    assert.equal(withCommand.code, 2);
    assert.match(withCommand.stderr, /^keys list does not take --version/);
  });

  it('`help worker` and `help serve` say the worker forwards to ad platforms too', async () => {
    for (const command of ['worker', 'serve']) {
      const res = await cli('help', command);
      assert.equal(res.code, 0);
      assert.match(res.stdout, /webhooks, and forwarding to ad platforms/, command);
    }
  });

  it('--json names each object’s own id `id`, as the API does, and a script can use it', async () => {
    const made = JSON.parse(
      (await cli('accounts', 'create', '--name', 'Ids', '--plan', 'pro', '--json')).stdout,
    );
    assert.match(made.id, /^acct_/);
    assert.equal(made.account_id, made.id, 'the contract’s name is kept beside it');
    // The tester's script read `.id` and got "No account undefined": now it reads the account.
    const shown = await cli('accounts', 'show', '--account', made.id, '--json');
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(JSON.parse(shown.stdout).id, made.id);
    const key = JSON.parse(
      (await cli('keys', 'create', '--account', made.id, '--name', 'CI', '--json')).stdout,
    );
    assert.match(key.id, /^key_/);
    assert.equal(key.key_id, key.id);
    assert.equal(key.account_id, made.id, 'a reference to another object keeps its name');
    const listed = JSON.parse((await cli('keys', 'list', '--account', made.id, '--json')).stdout);
    assert.ok(listed.keys.some((k: { id: string }) => k.id === key.id));
    const planned = JSON.parse(
      (await cli('plans', 'set', '--account', made.id, '--plan', 'ultra', '--json')).stdout,
    );
    assert.equal(planned.id, made.id);
    const revoked = JSON.parse((await cli('keys', 'revoke', '--key-id', key.id, '--json')).stdout);
    assert.equal(revoked.id, key.id);
  });

  it('revoking a key revoked already exits 1 saying so; an unknown account is named', async () => {
    const made = JSON.parse(
      (await cli('accounts', 'create', '--name', 'Twice', '--plan', 'pro', '--json')).stdout,
    );
    const key = JSON.parse((await cli('keys', 'create', '--account', made.id, '--json')).stdout);
    const first = await cli('keys', 'revoke', '--key-id', key.id);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, `Revoked key ${key.id}.\n`);
    const again = await cli('keys', 'revoke', '--key-id', key.id);
    assert.equal(again.code, 1);
    assert.equal(again.stdout, '');
    assert.match(
      again.stderr,
      new RegExp(`^Key ${key.id} was already revoked at \\S+Z; nothing changed\n$`),
    );
    const json = await cli('keys', 'revoke', '--key-id', key.id, '--json');
    assert.equal(json.code, 1);
    assert.equal(JSON.parse(json.stderr).error, 'Invalid request');
    const nobody = await cli('plans', 'set', '--account', 'acct_nope', '--plan', 'pro');
    assert.equal(nobody.code, 1);
    assert.equal(nobody.stderr, 'No such account: acct_nope\n');
  });
});
