// The files the server read a secret from (the requestState key, the introspection client's secret): kept
// here as they are read, so the `bash` sandbox hides each of them (sandbox/mounts.ts) wherever it lies. A
// secret the server holds must not be one `cat` away for a command, as the tokens file and SUPERPI_HOME
// are not either.

import { readFileSync } from 'node:fs';
import path from 'node:path';

const read = new Set<string>();

/** The file's text, the file remembered (absolute, against the current directory) as one that holds a secret. */
export function readSecretFile(file: string): string {
  const text = readFileSync(file, 'utf8');
  read.add(path.resolve(file));
  return text;
}

/** Every file readSecretFile has read, in the order first read. */
export function secretFilesRead(): readonly string[] {
  return [...read];
}
