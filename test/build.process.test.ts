/**
 * The package as an operator installs and runs it: compiled JavaScript under plain `node`, no
 * TypeScript loader among the production dependencies, and dependencies that all run on the
 * Node version `engines` promises.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import semver from 'semver';
import { tempDir } from './harness.ts';
import { type ServerProcess, startServerProcess } from './process.ts';

const root = new URL('../', import.meta.url);
const readJson = (path: string) => JSON.parse(readFileSync(new URL(path, root), 'utf8'));

describe('package.json: what `npm install --omit=dev` brings to production', () => {
  const pkg = readJson('package.json');

  it('has no TypeScript loader or compiler among the production dependencies', () => {
    for (const name of ['tsx', 'ts-node', 'typescript', 'esbuild']) {
      assert.equal(pkg.dependencies[name], undefined, `${name} is a production dependency`);
    }
    // `exec`: the shell npm runs the script in becomes the server, so a SIGTERM to npm reaches
    // it (issue 30); without it the shell dies and the server is left running.
    assert.match(pkg.scripts.start, /^exec node bin\/trackway\.js serve$/);
  });

  it('installs only packages whose engines admit the oldest Node that `engines` allows', () => {
    const oldest = semver.minVersion(pkg.engines.node)!.version;
    const lock = readJson('package-lock.json');
    const refusing = Object.entries(lock.packages as Record<string, { engines?: unknown }>)
      .filter(([path]) => path !== '')
      .flatMap(([path, entry]) => {
        const wanted = (entry.engines as { node?: string } | undefined)?.node;
        return typeof wanted === 'string' && !semver.satisfies(oldest, wanted)
          ? [`${path} wants node ${wanted}`]
          : [];
      });
    assert.deepEqual(refusing, [], `engines says ${pkg.engines.node}`);
  });

  it('is tested in CI on the oldest Node `engines` admits and on a supported LTS (issue 30)', () => {
    const ci = readFileSync(new URL('.ci/run', root), 'utf8');
    assert.match(ci, /^npm test$/m, 'the suite on the Node on PATH (the oldest)');
    assert.match(ci, /^scripts\/test-on-lts\.sh$/m, 'and again on the LTS');
    const script = readFileSync(new URL('scripts/test-on-lts.sh', root), 'utf8');
    const major = Number(/TRACKWAY_LTS_NODE:-node@(\d+)\}/.exec(script)?.[1]);
    // The Node.js release schedule's end-of-life dates: when the LTS tested here reaches its
    // own, this fails as a reminder to move to the next.
    const endOfLife: Record<number, string> = {
      22: '2027-04-30',
      24: '2028-04-30',
      26: '2029-04-30',
    };
    assert.ok(endOfLife[major], `node@${major} is not an LTS line this test knows`);
    assert.ok(
      new Date() < new Date(endOfLife[major]!),
      `node@${major} reached its end of life on ${endOfLife[major]}`,
    );
    assert.ok(semver.satisfies(`${major}.0.0`, pkg.engines.node), 'engines admits the LTS too');
  });
});

describe('bin/trackway.js runs the compiled build under plain node', () => {
  const dir = tempDir();
  let server: ServerProcess;

  before(async () => {
    // A module hook in the server process that refuses any TypeScript source or TypeScript
    // loader: the server must start and serve without touching one.
    const hooks = join(dir.path, 'refuse-typescript.mjs');
    writeFileSync(
      hooks,
      `export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (/\\.[cm]?ts$/.test(new URL(result.url).pathname) || /\\/node_modules\\/(tsx|esbuild)\\//.test(result.url)) {
    throw new Error('TypeScript loaded at runtime: ' + result.url);
  }
  return result;
}
`,
    );
    const register = join(dir.path, 'register.mjs');
    writeFileSync(
      register,
      `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
    );
    server = await startServerProcess({
      DATABASE_URL: `sqlite:${join(dir.path, 'trackway.db')}`,
      NODE_OPTIONS: `--import=${pathToFileURL(register).href}`,
    });
  });
  after(async () => {
    await server?.stop('SIGKILL');
    dir.remove();
  });

  it('starts from dist/ and tracks an event', async () => {
    const key = /^ {2}(tw_live_\w+)$/m.exec(server.output())?.[1];
    assert.ok(key, server.output());
    const call = async (path: string, body: unknown) => {
      const res = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const pixel = await call('/v1/pixels', { name: 'Shop', domain: 'shop.example.com' });
    assert.equal(pixel.status, 201);
    const tracked = await call('/v1/track', {
      pixel_id: pixel.body['id'],
      event_name: 'Purchase',
      event_id: 'built-1',
    });
    assert.deepEqual(tracked, {
      status: 200,
      body: { success: true, event_id: 'built-1', message: 'Event tracked' },
    });
  });
});
