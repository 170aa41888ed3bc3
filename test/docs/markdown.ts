// Reads the documentation as a reader's browser would: the pages (README.md and docs/*.md), their
// headings and the anchors GitHub makes of them, their links, and the tables of the configuration page.
// Not a *.test.ts file: the docs tests share it.

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A page of the documentation: its path from the repository root, and its text. */
export interface Page {
  readonly file: string;
  readonly text: string;
}

/** README.md and every page of docs/, in a stable order. */
export function documentationPages(root: string = repoRoot): Page[] {
  const docs = readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`);
  return ['README.md', ...docs].map((file) => ({ file, text: readFileSync(path.join(root, file), 'utf8') }));
}

/** The page's lines outside fenced code blocks (``` or ~~~), each with its 1-based line number. */
export function proseLines(text: string): { readonly line: number; readonly text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | null = null;
  text.split('\n').forEach((raw, i) => {
    const opener = /^ {0,3}(`{3,}|~{3,})/.exec(raw);
    if (fence === null && opener) fence = (opener[1] as string)[0] as string;
    else if (fence !== null && opener && (opener[1] as string)[0] === fence) fence = null;
    else if (fence === null) out.push({ line: i + 1, text: raw });
  });
  return out;
}

/**
 * The anchor GitHub gives a heading (github-slugger's rule): the text as rendered (link targets, code
 * backticks and emphasis marks dropped), lower-cased, every character that is not a letter, mark, digit,
 * `_`, `-` or space removed, spaces made hyphens.
 */
export function slugOf(heading: string): string {
  const rendered = heading.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '');
  return rendered.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The anchors of a page's headings; a repeated heading gets `-1`, `-2`… as on GitHub. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text: line } of proseLines(text)) {
    const m = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slugOf(m[1] as string);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** A link as written on a page: `[text](target)` or `![alt](target)`, outside code. */
export interface Link {
  readonly line: number;
  readonly target: string;
}

/** The inline links and images of a page, outside fenced code and `inline code`. */
export function linksOf(text: string): Link[] {
  const links: Link[] = [];
  for (const { line, text: raw } of proseLines(text)) {
    const prose = raw.replace(/`[^`]*`/g, (code) => ' '.repeat(code.length));
    for (const m of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ line, target: m[1] as string });
  }
  return links;
}

/**
 * What is wrong with each relative link of `pages`: its file does not exist, or its `#anchor` names no
 * heading of the page it points to. Links with a scheme (https:, mailto:) are not followed.
 */
export function brokenLinks(pages: readonly Page[], exists: (file: string) => boolean, read: (file: string) => string): string[] {
  const broken: string[] = [];
  for (const page of pages) {
    for (const link of linksOf(page.text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue;
      const hash = link.target.indexOf('#');
      const filePart = hash < 0 ? link.target : link.target.slice(0, hash);
      const anchor = hash < 0 ? null : decodeURIComponent(link.target.slice(hash + 1));
      const target = filePart === '' ? page.file : path.posix.normalize(path.posix.join(path.posix.dirname(page.file), decodeURIComponent(filePart)));
      const where = `${page.file}:${link.line}: (${link.target})`;
      if (target.startsWith('../') || path.posix.isAbsolute(target)) {
        broken.push(`${where} points outside the repository`);
        continue;
      }
      if (!exists(target)) {
        broken.push(`${where}: ${target} does not exist`);
        continue;
      }
      if (anchor === null || anchor === '') continue;
      if (!target.endsWith('.md')) {
        broken.push(`${where}: an anchor into ${target}, which is not a Markdown page`);
        continue;
      }
      const text = target === page.file ? page.text : read(target);
      if (!anchorsOf(text).has(anchor)) broken.push(`${where}: ${target} has no heading whose anchor is #${anchor}`);
    }
  }
  return broken;
}

/** The page's tables: each a list of rows (its header first), each row its cells; separator rows left out. */
export function tablesOf(text: string): string[][][] {
  const tables: string[][][] = [];
  let current: string[][] | null = null;
  let last = -1;
  for (const { line, text: l } of proseLines(text)) {
    if (!l.startsWith('|')) continue;
    if (current === null || line !== last + 1) tables.push((current = []));
    last = line;
    if (/^\|[\s|:-]+\|?$/.test(l)) continue;
    current.push(l.replace(/^\|/, '').replace(/\|\s*$/, '').split(/(?<!\\)\|/).map((c) => c.trim()));
  }
  return tables;
}

/** The cells of every table row of a page, all tables together. */
export function tableRows(text: string): string[][] {
  return tablesOf(text).flat();
}
