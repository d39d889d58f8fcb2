// The page in Debian's headless Chromium against the scripted LLM server on 127.0.0.1: it
// creates and edits files, steers and stops, and does exactly what the native host does on the
// same scenarios (same tool calls, same tool results, same final files).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { browserUnavailable, startBrowser } from './support/browser.mjs';
import { TARGET, runNative, startScriptedServer } from './support/processes.mjs';
import { CREATE_A_FILE, EDIT_A_FILE, STEER, STOP } from './support/scenarios.mjs';

const unavailable = browserUnavailable();
const FINISHED = ['completed', 'cancelled', 'round-limit', 'turn-limit', 'awaiting-input', 'context-length', 'aborted', 'error'];

/** Waits until the page's run is over and returns its state word. The timeout guards against
 * a hang only: a scenario's run takes a few seconds. */
async function finished(page, timeout = 30_000) {
  await page.waitForFunction((states) => states.includes(document.body.dataset.state), FINISHED, { timeout });
  return page.evaluate(() => document.body.dataset.state);
}

async function submit(page, task) {
  await page.fill('#task', task);
  await page.click('#send');
}

/** Runs a scenario in a fresh page; returns its events, final files and the server's requests. */
async function runInBrowser(browser, scenario, { screenshot } = {}) {
  const server = await startScriptedServer(scenario.script);
  try {
    const page = await browser.open(`?server=${encodeURIComponent(server.url)}&empty=1`);
    await page.evaluate((files) => window.agentPage.seed(files), scenario.files);
    await submit(page, scenario.task);
    const state = await finished(page);
    assert.equal(state, 'completed', await page.textContent('#status'));
    const events = await page.evaluate(() => window.agentPage.events);
    const files = await page.evaluate(() => window.agentPage.exportWorkspace());
    if (screenshot) {
      await mkdir(join(TARGET, 'web-screenshots'), { recursive: true });
      await page.screenshot({ path: join(TARGET, 'web-screenshots', screenshot), fullPage: true });
    }
    return { page, events, files, root: '/workspace', requests: await server.stop() };
  } catch (e) {
    await server.stop().catch(() => {});
    throw e;
  }
}

/** The tool calls of a run, with the working directory written as `<root>`. */
function toolCalls(events, root) {
  const starts = events.filter((e) => e.kind === 'TOOL_CALL_START' && !e.agentId);
  const ends = new Map(events.filter((e) => e.kind === 'TOOL_CALL_END').map((e) => [e.data.call_id, e.data]));
  const norm = (s) => (typeof s === 'string' ? s.replaceAll(root, '<root>') : s);
  return starts.map((e) => {
    const end = ends.get(e.data.call_id) ?? {};
    return { tool: e.data.tool_name, arguments: e.data.arguments, output: norm(end.output), error: norm(end.error) };
  });
}

describe('the page in headless Chromium', { skip: unavailable }, () => {
  let browser;
  before(async () => {
    browser = await startBrowser();
  });
  after(async () => {
    await browser?.close();
  });

  test('completes a create-a-file task and shows the new file in the tree', async () => {
    const run = await runInBrowser(browser, CREATE_A_FILE);
    assert.deepEqual(run.files, CREATE_A_FILE.expectedFiles);
    await run.page.waitForSelector('#files [data-path="notes/todo.md"]');
    assert.match(await run.page.textContent('#events'), /Created notes\/todo\.md with two chores\./);
    assert.equal(await run.page.locator('#events .tool-call[data-tool="write_file"] .diff .add').count() > 0, true);
    assert.deepEqual(browser.problems, []);
    await run.page.close();
  });

  test('completes an edit-a-file task, with the edit shown as a diff', async () => {
    const run = await runInBrowser(browser, EDIT_A_FILE, { screenshot: 'finished-run.png' });
    assert.deepEqual(run.files, EDIT_A_FILE.expectedFiles);
    const diff = await run.page.textContent('#events .tool-call[data-tool="edit_file"] .diff');
    assert.match(diff, /Hi, \$\{name\}!/);
    assert.match(diff, /'Hello, ' \+ name/);
    await run.page.click('#files [data-path="src/greet.js"]');
    assert.match(await run.page.textContent('#file-view'), /return `Hi, \$\{name\}!`;/);
    assert.deepEqual(browser.problems, []);
    await run.page.close();
  });

  test('a shell call fails with a clear message the model can act on', async () => {
    const server = await startScriptedServer({
      anthropic: [
        [tool('toolu_x1', 'shell', { command: 'ls' })],
        [{ type: 'text', text: 'No shell here; I will use the file tools.' }],
      ],
    });
    const page = await browser.open(`?server=${encodeURIComponent(server.url)}&empty=1`);
    await submit(page, 'List the files.');
    assert.equal(await finished(page), 'completed');
    const requests = await server.stop();
    const second = JSON.stringify(JSON.parse(requests[1].body).messages.at(-1));
    assert.match(second, /no process execution/i);
    assert.match(JSON.parse(requests[0].body).system.map((b) => b.text).join(''), /<no_processes>/);
    await page.close();
  });

  test('typing while the agent works steers it', async () => {
    const server = await startScriptedServer(STEER.script);
    const page = await browser.open(`?server=${encodeURIComponent(server.url)}&empty=1`);
    await page.evaluate((files) => window.agentPage.seed(files), STEER.files);
    await submit(page, STEER.task);
    await page.waitForFunction(() => document.body.dataset.state === 'running');
    await submit(page, STEER.steering);
    assert.equal(await finished(page), 'completed');
    const events = await page.evaluate(() => window.agentPage.events);
    const injected = events.find((e) => e.kind === 'STEERING_INJECTED');
    assert.equal(injected?.data.content, STEER.steering);
    const requests = await server.stop();
    assert.equal(requests.length, 2);
    assert.ok(!requests[0].body.includes(STEER.steering));
    assert.ok(requests[1].body.includes(STEER.steering), 'the second request carries the steering message');
    assert.match(await page.textContent('#events'), /Keep the summary to one line\./);
    await page.close();
  });

  test('stop cancels the input mid-stream and the session goes on', async () => {
    const server = await startScriptedServer(STOP.script);
    const page = await browser.open(`?server=${encodeURIComponent(server.url)}&empty=1`);
    await submit(page, STOP.task);
    // The timeout guards against a hang only: the first piece comes within seconds.
    await page.waitForFunction(() => window.agentPage.events.some((e) => e.kind === 'ASSISTANT_TEXT_DELTA'), null, { timeout: 60_000 });
    await page.click('#stop');
    assert.equal(await finished(page), 'cancelled');
    // The stop cut the answer rather than waiting it out: some of its pieces never came.
    const events = await page.evaluate(() => window.agentPage.events);
    const pieces = events.filter((e) => e.kind === 'ASSISTANT_TEXT_DELTA').length;
    assert.ok(pieces < STOP.pieces, `${pieces} of the answer's ${STOP.pieces} pieces streamed`);
    await submit(page, 'Are you there?');
    assert.equal(await finished(page), 'completed');
    assert.match(await page.textContent('#events'), /Still here\./);
    await server.stop();
    await page.close();
  });

  for (const scenario of [CREATE_A_FILE, EDIT_A_FILE]) {
    test(`${scenario.name}: the browser and the native host make the same tool calls and leave the same files`, async () => {
      const web = await runInBrowser(browser, scenario);
      await web.page.close();
      const native = await runNative(scenario);
      assert.deepEqual(web.files, native.files);
      assert.deepEqual(native.files, scenario.expectedFiles);
      const webCalls = toolCalls(web.events, web.root);
      const nativeCalls = toolCalls(native.events, native.cwd);
      assert.equal(webCalls.length, scenario.script.anthropic.length - 1);
      for (const call of webCalls) {
        assert.ok(call.tool && typeof call.output === 'string' && call.output.length > 0, JSON.stringify(call));
      }
      assert.deepEqual(webCalls, nativeCalls);
    });
  }
});

function tool(id, name, input) {
  return { type: 'tool_use', id, name, input };
}

if (unavailable) console.log(`browser tests skipped: ${unavailable}`);
