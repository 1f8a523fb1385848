#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so a checkout works without a build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
const code = await main(process.argv.slice(2));
if (code >= 0) process.exitCode = code;
