// The observer page in a real headless chromium against what an attacker controls (adversarial review of
// the observer): a transcript full of markup — a file named and filled with it, tool arguments, the
// prompt, the model's answer, the client's name — is shown as text and runs nothing (no global set, no
// dialog, no request leaves the server's origin); and a page on another origin cannot frame the observer
// (`frame-ancestors 'none'`), nor have the server serve it observer data with a no-cors fetch.

import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Browser, chromium } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type ScriptStep, startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { needs } from '../requirements.ts';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess, textOf } from './fixtures.ts';

const CHROMIUM = process.env.OBSERVER_TEST_CHROMIUM ?? '/usr/bin/chromium';
const SHOWN_MS = 15_000;

/** Markup that would run if any of it reached the DOM as HTML (or an attribute, or a URL), each marking which. */
const hostile = (n: number) => `</pre></script><script>window.__pwned=${n}</script><img src=x onerror="window.__pwned=${n}"><svg onload="window.__pwned=${n}"></svg><a href="javascript:window.__pwned=${n}">x</a><iframe srcdoc="<script>parent.__pwned=${n}</script>"></iframe>`;
const FILE_NAME = '<img src=x onerror=window.__pwned=1>.txt';
const toolTurn = (name: string, args: object): ScriptStep => ({
  body: { choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', content: hostile(2), tool_calls: [{ id: `call-${name}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }] } }] },
});
const FINAL = `done ${hostile(3)} END-OF-HOSTILE-ANSWER`;

const hasChromium = needs('chromium', existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
const hostileSuite = suite('observer page against hostile content in chromium');
const observer = hasChromium ? hostileSuite : hostileSuite.skip;
let box: Sandbox;
let home: string;
let browser: Browser;
const started: { stop(): Promise<unknown> }[] = [];

hostileSuite.before(async () => {
  if (!hasChromium) return;
  box = await makeSandbox();
  home = await mkdtemp(path.join(os.tmpdir(), 'superpi-observer-hostile-'));
  await writeFile(path.join(box.ws, FILE_NAME), `${hostile(4)}\n`);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
});
hostileSuite.after(async () => {
  const made = { browser: browser as Browser | undefined, box: box as Sandbox | undefined, home: home as string | undefined };
  await made.browser?.close();
  for (const s of started.reverse()) await s.stop();
  await made.box?.cleanup();
  if (made.home !== undefined) await rm(made.home, { recursive: true, force: true });
});

/** A page on another origin (127.0.0.1 at its own port, the observer being reached as localhost). */
async function otherOrigin(html: (target: string) => string, target: string): Promise<{ url: string; stop(): Promise<void> }> {
  const server: Server = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(html(target)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const stop = () => new Promise<void>((r) => server.close(() => r()));
  started.push({ stop });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, stop };
}

observer('a transcript full of markup is shown as text and runs nothing', async () => {
  const model = await startScriptedServer([
    toolTurn('ls', { path: '.' }),
    toolTurn('read', { path: FILE_NAME }),
    toolTurn('grep', { pattern: hostile(5), path: '.' }),
    { body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: FINAL } }] } },
  ]);
  started.push({ stop: () => model.close() });
  const server: RunningServer = await startHttpServerProcess(box.ws, ['--threads', '1', '--tool-threads', '1', '--allow-anonymous-tasks'], {
    SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_API_KEY: 'sk-test', SUPERPI_HOME: home,
  });
  started.push(server);
  const base = server.url.replace(/\/mcp$/, '');
  const page = await browser.newPage();
  const elsewhere: string[] = [];
  const dialogs: string[] = [];
  page.on('request', (r) => { if (!r.url().startsWith(`${base}/`)) elsewhere.push(r.url()); });
  page.on('dialog', (d) => { dialogs.push(d.message()); void d.dismiss(); });
  const client = new Client({ name: hostile(6), version: hostile(7) });
  try {
    await page.goto(`${base}/observer`);
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    const result = await client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: `look ${hostile(8)}` } });
    assert.match(textOf(result), /END-OF-HOSTILE-ANSWER/);
    const row = page.locator('#tasks tr[data-status="completed"]');
    await row.waitFor({ timeout: SHOWN_MS });
    await row.click();
    await page.waitForFunction(() => /END-OF-HOSTILE-ANSWER/.test(document.getElementById('transcript')?.textContent ?? ''), undefined, { timeout: SHOWN_MS });
    const transcript = await page.locator('#transcript').innerText();
    // Every hostile piece reached the page, as text.
    for (const n of [2, 3, 4, 5, 8]) assert.ok(transcript.includes(`window.__pwned=${n}`), `hostile piece ${n} is shown`);
    assert.ok(transcript.includes('onerror=window.__pwned=1'), 'the file name is shown');
    assert.is(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned), undefined, 'no hostile script ran');
    assert.is(await page.locator('#transcript *, #tasks script, #tasks img, #tasks iframe, #tasks a, #sessions img, #sessions script').count(), 0, 'no element made from data');
    assert.is(await page.locator('script').count(), 1, 'the page\'s own script only');
    assert.equal(dialogs, []);
    assert.equal(elsewhere, [], 'no request left the observer\'s origin');
  } finally {
    await client.close();
    await page.close();
  }
});

observer('a page on another origin cannot frame the observer, nor get observer data served to it', async () => {
  const server = await startHttpServerProcess(box.ws, ['--threads', '1', '--tool-threads', '1']);
  started.push(server);
  const target = server.url.replace(/\/mcp$/, '').replace('127.0.0.1', 'localhost');
  const evil = await otherOrigin((t) => `<!doctype html><iframe id="f" src="${t}/observer" width="800" height="600"></iframe>
<script>
window.statuses = [];
// A no-cors fetch reads no body, but the server worked for it; the page sees only an opaque answer.
fetch('${t}/observer/transcript?task=task-1&after=0', { mode: 'no-cors' }).then((r) => window.statuses.push(r.type), () => window.statuses.push('error'));
</script>`, target);
  const page = await browser.newPage();
  // The answers as the network saw them (CDP): a blocked response (CORP, frame-ancestors) fires no page event.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  // Joined by request id at the end: CDP may report a request's extra info before the request itself.
  const urls = new Map<string, string>();
  const sites = new Map<string, string | undefined>();
  const statuses = new Map<string, number>();
  cdp.on('Network.requestWillBeSent', (e) => urls.set(e.requestId, e.request.url));
  cdp.on('Network.requestWillBeSentExtraInfo', (e) => sites.set(e.requestId, (e.headers as Record<string, string>)['Sec-Fetch-Site'] ?? (e.headers as Record<string, string>)['sec-fetch-site']));
  cdp.on('Network.responseReceivedExtraInfo', (e) => statuses.set(e.requestId, e.statusCode));
  const answered = () => [...statuses].map(([id, status]) => ({ url: urls.get(id) ?? '', status, site: sites.get(id) })).filter((s) => s.url.startsWith(target));
  try {
    await page.goto(evil.url);
    await page.waitForFunction(() => (window as unknown as { statuses: string[] }).statuses.length === 1, undefined, { timeout: SHOWN_MS });
    await page.waitForTimeout(1500); // the framed page, had it loaded, would have run its script and asked for data by now
    const framed = page.frames().filter((f) => f !== page.mainFrame());
    assert.is(framed.length, 1);
    const shown = await framed[0]!.evaluate(() => document.getElementById('tree') !== null).catch(() => false);
    assert.is(shown, false, 'the observer rendered inside another origin\'s frame');
    const seen = answered();
    const transcript = seen.find((s) => s.url.includes('/observer/transcript'));
    assert.ok(transcript !== undefined, 'the no-cors fetch was sent');
    assert.is(transcript.site, 'cross-site', 'chromium names the other site');
    assert.is(transcript.status, 403, 'the server refused it before any work');
    assert.not.ok(seen.some((s) => s.url.includes('/observer/events')), 'no event stream was opened for a framed page');
  } finally {
    await page.close();
  }
});

hostileSuite.run();
