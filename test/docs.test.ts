/**
 * The README and docs/ as a user who cloned the repository reads them: they stand alone (no
 * link leaves the repository, every relative link resolves), the README opens with the two
 * commands, and every curl example talks to $TRACKWAY_URL rather than a hard-coded address.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const documents = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const read = (path: string) => readFileSync(join(root, path), 'utf8');

describe('README and docs/', () => {
  it('open the README with the two commands', () => {
    const fence = /^```sh\n(.*)\n(.*)\n```/m.exec(read('README.md'));
    assert.ok(fence);
    assert.match(fence[1]!, /^npm install && npm start\s/);
    assert.match(fence[2]!, /^npm test\s/);
  });

  it('never point outside the repository, and every relative link resolves', () => {
    for (const path of documents) {
      const text = read(path);
      assert.doesNotMatch(text, /\.\.\/shared|\/work\//, path);
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue; // https:, mailto:
        const file = resolve(dirname(join(root, path)), target!);
        assert.ok(file.startsWith(root), `${path} links outside the repository: ${target}`);
        assert.ok(existsSync(file), `${path} links to a missing file: ${target}`);
      }
    }
  });

  it('send every curl example to $TRACKWAY_URL', () => {
    for (const path of documents) {
      for (const line of read(path).split('\n')) {
        if (!/\bcurl\b/.test(line) || !/https?:\/\//.test(line)) continue;
        assert.fail(`${path}: curl with a hard-coded address: ${line.trim()}`);
      }
    }
    assert.match(read('README.md'), /^export TRACKWAY_URL=http:\/\/127\.0\.0\.1:8080\b/m);
  });

  it('keep RELIABILITY.md one table, each fault in it once (issue 30: it held its table twice)', () => {
    const text = read('RELIABILITY.md');
    const headers = text.split('\n').filter((line) => /^\| fault or attack +\|/.test(line));
    assert.equal(headers.length, 1, 'one table');
    // The rows of that table: from its header to the first line that is not a table row.
    const lines = text.split('\n');
    const start = lines.findIndex((line) => /^\| fault or attack +\|/.test(line));
    const end = lines.findIndex((line, i) => i > start && !line.startsWith('|'));
    const faults = lines
      .slice(start, end === -1 ? undefined : end)
      .filter((line) => line.startsWith('| ') && !/^\| (fault or attack|-)/.test(line))
      .map((line) => line.split(/(?<!\\)\|/)[1]!.trim());
    const twice = faults.filter((fault, i) => faults.indexOf(fault) !== i);
    assert.deepEqual(twice, [], 'rows that appear twice');
  });
});
