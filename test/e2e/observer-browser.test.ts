// The observer page in a real headless browser (Debian's chromium, driven by playwright-core): the page
// asks for an observer's token, then shows the supervision tree, the sessions of two MCP clients and a
// harness task that runs (with its transcript as it grows) and completes; on a server with
// `--chaos kill-worker` it shows the scheduler restarts. With SUPERPI_SCREENSHOT=1 it saves the screenshot the README shows.

import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Browser, chromium, type Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type ScriptStep, type ScriptedServer, startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { needs } from '../requirements.ts';
import { makeSandbox, repoRoot, type RunningServer, type Sandbox, startHttpServerProcess, textOf } from './fixtures.ts';

/** OBSERVER_TEST_CHROMIUM: another browser binary (test/requirements.test.ts points it at none). */
const CHROMIUM = process.env.OBSERVER_TEST_CHROMIUM ?? '/usr/bin/chromium';
const TOKENS = 'alice-observer-e2e=alice,bob-observer-e2e=bob';
/** How long the page may take to show something the server already knows (it updates twice a second). */
const SHOWN_MS = 15_000;

const toolTurn = (name: string, args: object, delayMs: number): ScriptStep => ({
  delayMs,
  body: { choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: `call-${name}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }] } }] },
});
const answer = (text: string, delayMs: number): ScriptStep => ({ delayMs, body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });

// Without chromium (installed by .ci/run, not by npm) the tests are skipped outside CI and fail in it.
const hasChromium = needs('chromium', existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
const observerSuite = suite('observer page in chromium');
const observer = hasChromium ? observerSuite : observerSuite.skip;
let box: Sandbox;
let home: string;
let browser: Browser;
const started: { stop(): Promise<unknown> }[] = [];

observerSuite.before(async () => {
  if (!hasChromium) return;
  box = await makeSandbox();
  home = await mkdtemp(path.join(os.tmpdir(), 'superpi-observer-home-'));
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
});
observerSuite.after(async () => {
  // A before hook that failed part-way left some of these unset: cleaning up must not hide its error.
  const made = { browser: browser as Browser | undefined, box: box as Sandbox | undefined, home: home as string | undefined };
  await made.browser?.close();
  for (const s of started.reverse()) await s.stop();
  await made.box?.cleanup();
  if (made.home !== undefined) await rm(made.home, { recursive: true, force: true });
});

async function connect(url: string, token: string): Promise<Client> {
  const c = new Client({ name: `observer-e2e-${token.slice(0, 5)}`, version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return c;
}

const rows = (page: Page, selector: string) => page.locator(selector).count();

observer('shows the tree, two sessions and a task that runs and completes with its transcript; only for an observer', async () => {
  const model: ScriptedServer = await startScriptedServer([
    toolTurn('read', { path: 'src/greet.ts' }, 1200),
    toolTurn('grep', { pattern: 'hello', path: 'src' }, 1200),
    answer('greet says hello.', 1200),
  ]);
  started.push({ stop: () => model.close() });
  const server: RunningServer = await startHttpServerProcess(box.ws, ['--threads', '2', '--tool-threads', '1', '--observers', 'alice'], {
    SUPERPI_TOKENS: TOKENS, SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_API_KEY: 'sk-test', SUPERPI_HOME: home,
  });
  started.push(server);
  const base = server.url.replace(/\/mcp$/, '');
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  try {
    await page.goto(`${base}/observer`);
    // No token yet: the page asks for one and shows nothing of the server.
    await page.locator('#auth.shown').waitFor({ timeout: SHOWN_MS });
    assert.is(await rows(page, '#tree li'), 0);
    await page.fill('#token', 'bob-observer-e2e');
    await page.click('#auth button');
    await page.waitForFunction(() => /not named in --observers/.test(document.getElementById('status')?.textContent ?? ''), undefined, { timeout: SHOWN_MS });
    assert.is(await rows(page, '#tree li'), 0, 'bob is not an observer');
    await page.fill('#token', 'alice-observer-e2e');
    await page.click('#auth button');
    await page.locator('#tree li[data-node="sessions"]').waitFor({ timeout: SHOWN_MS });
    for (const id of ['schedulers', 'scheduler-0', 'scheduler-1', 'tools', 'tasks']) assert.is(await rows(page, `#tree li[data-node="${id}"]`), 1, id);
    assert.is(await rows(page, '#workers tr[data-worker]'), 2);

    const alice = await connect(server.url, 'alice-observer-e2e');
    const bob = await connect(server.url, 'bob-observer-e2e');
    await page.waitForFunction(() => document.querySelectorAll('#sessions tr[data-session]').length === 2, undefined, { timeout: SHOWN_MS });
    const sessionText = await page.locator('#sessions tbody').innerText();
    assert.match(sessionText, /alice/);
    assert.match(sessionText, /bob/);
    assert.match(sessionText, /2025-11-25|2025-06-18|2025-03-26/, 'the negotiated version');
    assert.is(await rows(page, '#tree li[data-node="connection"]'), 2, 'one connection actor under each session supervisor');
    // Rows are matched by the session's handle, never its Mcp-Session-Id (a credential: the page must not hold it).
    for (const handle of await page.locator('#sessions tr[data-session]').evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.session ?? ''))) assert.match(handle, /^session-\d+$/);
    const html = await page.content();
    for (const c of [alice, bob]) {
      const id = (c.transport as StreamableHTTPClientTransport).sessionId;
      assert.ok(id !== undefined && id.length >= 32, 'the client holds its session id');
      assert.not.ok(html.includes(id), 'the page shows a session id');
    }

    const call = alice.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'What does greet say?' } });
    // Meanwhile bob works too, so the chart has something to draw.
    let taskDone = false;
    const bobWorks = (async () => {
      while (!taskDone) {
        await bob.callTool({ name: 'read', arguments: { path: 'src/math.ts' } });
        await bob.callTool({ name: 'ls', arguments: { path: 'src' } });
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const running = page.locator('#tasks tr[data-status="running"]');
    await running.waitFor({ timeout: SHOWN_MS });
    await running.click();
    await page.waitForFunction(() => /\buser\b.*What does greet say/.test(document.getElementById('transcript')?.textContent ?? ''), undefined, { timeout: SHOWN_MS });
    assert.is(await rows(page, '#tree li[data-node="task-1"]'), 1, 'the task supervisor is in the tree');
    const result = await call;
    taskDone = true;
    await bobWorks;
    assert.is(textOf(result), 'greet says hello.');
    const done = page.locator('#tasks tr[data-task="task-1"][data-status="completed"]');
    await done.waitFor({ timeout: SHOWN_MS });
    const cells = await done.locator('td').allInnerTexts();
    assert.equal(cells.slice(2, 7), ['alice', 'super-pi-code', 'completed', '3', '2'], 'principal, harness, status, turns, tool calls');
    await page.waitForFunction(() => /\bfinal\b/.test(document.getElementById('transcript')?.textContent ?? ''), undefined, { timeout: SHOWN_MS });
    // The chart has drawn the calls (the grep, the reads inline, the task itself).
    await page.waitForFunction(() => (document.querySelector('#chart path[data-series="calls"]')?.getAttribute('d') ?? '').includes('L'), undefined, { timeout: SHOWN_MS });

    // The README's picture is retaken on request (SUPERPI_SCREENSHOT=1), so a test run leaves the checkout as it was.
    const shot = process.env.SUPERPI_SCREENSHOT === '1' ? path.join(repoRoot, 'docs/observer.png') : path.join(os.tmpdir(), `superpi-observer-${process.pid}.png`);
    await mkdir(path.dirname(shot), { recursive: true });
    await page.screenshot({ path: shot, fullPage: true });
    assert.ok(existsSync(shot), 'the page was rendered to a screenshot');
    if (process.env.SUPERPI_SCREENSHOT !== '1') await rm(shot, { force: true });

    const metrics = await (await fetch(`${base}/metrics`, { headers: { Authorization: 'Bearer alice-observer-e2e' } })).text();
    assert.match(metrics, /^superpi_tasks\{status="completed"\} 1$/m);
    assert.match(metrics, /^superpi_tool_calls_total\{tool="harness_task",harness="super-pi-code",outcome="ok"\} 1$/m);
    assert.match(metrics, /^superpi_store_append_duration_seconds_count \d+$/m);
    assert.ok(Number(/^superpi_store_append_duration_seconds_count (\d+)$/m.exec(metrics)?.[1]) >= 6, 'every transcript entry was timed');
    assert.match(metrics, /^superpi_sessions\{transport="http",principal="token"\} 2$/m);

    // DELETE ends each HTTP session (a plain close only drops the connection).
    for (const c of [bob, alice]) {
      await (c.transport as StreamableHTTPClientTransport).terminateSession();
      await c.close();
    }
    await page.waitForFunction(() => document.querySelectorAll('#sessions tr[data-session]').length === 0, undefined, { timeout: SHOWN_MS });
  } finally {
    await page.close();
  }
});

observer('on a server with --chaos kill-worker, the restarted scheduler threads show their restarts', async () => {
  const server = await startHttpServerProcess(box.ws, ['--threads', '2', '--tool-threads', '1', '--chaos', 'kill-worker=700']);
  started.push(server);
  const page = await browser.newPage();
  try {
    await page.goto(server.url.replace(/\/mcp$/, '/observer'));
    await page.waitForFunction(() => [...document.querySelectorAll<HTMLElement>('#tree li[data-node^="scheduler-"]')].some((li) => Number(li.dataset.restarts) > 0), undefined, { timeout: SHOWN_MS });
    const restarted = await page.locator('#tree li[data-node^="scheduler-"] .restarts').first().innerText();
    assert.match(restarted, /↻ \d+/);
    await page.waitForFunction(() => /last exit: /.test(document.getElementById('tree')?.textContent ?? ''), undefined, { timeout: SHOWN_MS });
    await page.waitForFunction(() => [...document.querySelectorAll('#workers tr[data-worker]')].some((tr) => Number(tr.children[2]?.textContent) > 0), undefined, { timeout: SHOWN_MS });
  } finally {
    await page.close();
  }
});

observerSuite.run();
