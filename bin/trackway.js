#!/usr/bin/env node
// Runs the compiled CLI (dist/, built by `npm install` or `npm run build`): plain node, no
// TypeScript loader in production.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('trackway: dist/ is missing: run `npm install` or `npm run build` first\n');
  process.exit(1);
}
const { main } = await import(entry.href);
const code = await main(process.argv.slice(2));
if (code >= 0) process.exitCode = code;
