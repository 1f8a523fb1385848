/**
 * Each official client's README example runs as written against a real server: the first
 * fenced block tagged with the client's language (```python, ```go, ```php, ```ruby) is saved
 * and run with TRACKWAY_API_KEY and TRACKWAY_URL set, for a fresh account. It must exit 0 and
 * leave the account with at least one stored event (what the example tracked).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DRIVERS, run, unavailable } from './clients/drivers.ts';
import { tempDir } from './harness.ts';
import { runCli, type ServerProcess, startServerProcess } from './process.ts';

/** The first fenced block whose info string is `lang`. */
export function firstBlock(markdown: string, lang: string): string | undefined {
  const match = new RegExp(`^\`\`\`${lang}[ \\t]*\\n([\\s\\S]*?)^\`\`\`[ \\t]*$`, 'm').exec(
    markdown,
  );
  return match?.[1];
}

describe('official clients: README examples run as written', () => {
  const dir = tempDir('trackway-readme-');
  const env = { DATABASE_URL: `sqlite:${join(dir.path, 'trackway.db')}` };
  let server: ServerProcess;
  const keys = new Map<string, string>();

  before(async () => {
    // One account per client, made before the server starts (no first-run account).
    for (const driver of DRIVERS) {
      const made = await runCli(
        ['accounts', 'create', '--name', `README ${driver.name}`, '--plan', 'pro', '--json'],
        env,
      );
      assert.equal(made.code, 0, made.stderr);
      keys.set(driver.name, (JSON.parse(made.stdout) as { api_key: string }).api_key);
    }
    server = await startServerProcess(env, 90_000);
  });
  after(async () => {
    await server?.stop('SIGKILL');
    dir.remove();
  });

  it('finds the first block of a language', () => {
    const md = '# x\n```sh\nls\n```\n\n```python\nprint(1)\n```\n```python\nprint(2)\n```\n';
    assert.equal(firstBlock(md, 'python'), 'print(1)\n');
    assert.equal(firstBlock(md, 'go'), undefined);
  });

  for (const driver of DRIVERS) {
    it(`${driver.name}: clients/${driver.name}/README.md`, async (t) => {
      const reason = unavailable(driver);
      if (reason) return t.skip(reason);
      const readme = readFileSync(join(driver.dir, 'README.md'), 'utf8');
      const code = firstBlock(readme, driver.fence);
      assert.ok(code, `no \`\`\`${driver.fence} block in clients/${driver.name}/README.md`);
      const apiKey = keys.get(driver.name)!;
      const example = driver.example(code);
      try {
        const result = await run(
          example.command,
          { TRACKWAY_API_KEY: apiKey, TRACKWAY_URL: server.url },
          '',
          180_000,
        );
        assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
      } finally {
        example.cleanup();
      }
      // What the example tracked is stored in this client's account.
      const headers = { authorization: `Bearer ${apiKey}` };
      const pixels = (await (await fetch(`${server.url}/v1/pixels`, { headers })).json()) as {
        pixels: Array<{ id: string }>;
      };
      let stored = 0;
      for (const pixel of pixels.pixels) {
        const res = await fetch(`${server.url}/v1/pixels/${pixel.id}/events?limit=1`, { headers });
        stored += ((await res.json()) as { total: number }).total;
      }
      assert.ok(stored >= 1, 'the example stored no event');
    });
  }
});
