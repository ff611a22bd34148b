#!/usr/bin/env node
// The `forecourt` command. The sources are TypeScript, run through tsx so that a fresh clone
// needs no build step: `npm ci` and go.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
