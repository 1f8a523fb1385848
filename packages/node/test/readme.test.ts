/**
 * The client's README names every method the client has (issue 30: it left out `keys`,
 * `stats`, `erase`, `export` and `validate`), so a method added without a word fails here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Trackway } from '../src/index.ts';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** `ns.method` for every `ns.{a,b}` group and every `ns.method` the README writes. */
function documented(): Set<string> {
  const names = new Set<string>();
  for (const [, ns, list] of readme.matchAll(/\b([a-z]+)\.\{([a-zA-Z, ]+)\}/g)) {
    for (const method of list!.split(',')) names.add(`${ns}.${method.trim()}`);
  }
  for (const [, ns, method] of readme.matchAll(/\b([a-z]+)\.([a-zA-Z]+)\(/g)) {
    names.add(`${ns}.${method}`);
  }
  return names;
}

describe('@trackway/node README', () => {
  it('documents every method of every namespace the client has', () => {
    const client = new Trackway({ apiKey: 'tw_test_readme', baseUrl: 'http://127.0.0.1:1' });
    const has: string[] = [];
    for (const [ns, value] of Object.entries(client)) {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) continue;
      for (const [method, fn] of Object.entries(value as Record<string, unknown>)) {
        if (typeof fn === 'function') has.push(`${ns}.${method}`);
      }
    }
    assert.ok(has.includes('keys.create') && has.includes('events.export'), has.join(', '));
    const named = documented();
    const missing = has.filter((name) => !named.has(name));
    assert.deepEqual(missing, [], `README.md does not name: ${missing.join(', ')}`);
  });
});
