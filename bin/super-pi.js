#!/usr/bin/env node
// The `super-pi` command: runs the TypeScript entry point through tsx's loader.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
