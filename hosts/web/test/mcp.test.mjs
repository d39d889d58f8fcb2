// MCP servers over streamable HTTP, against real servers on 127.0.0.1: the npm
// reference server server-everything, and the SDK's own server for a tool list that changes
// (test/support/mcp.mjs says why). Under Node: McpServer as a tool source, through the same
// HostTools a session uses (Node 20 has no JSPI, so the core itself runs in the browser
// tests). In headless Chromium: sessions of the real component calling MCP tools through the
// page's fetch, across origins, with the scripted LLM server as the model.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HostTools } from '../src/host-tools.js';
import { McpServer, resultOf } from '../src/mcp.js';
import { browserUnavailable, startBrowser } from './support/browser.mjs';
import { closedPort, startEverything, startListChangingServer } from './support/mcp.mjs';
import { startScriptedServer } from './support/processes.mjs';
import { text, tool, toolResults } from './support/replies.mjs';

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** server-everything 2026.8.31's tools for a client without roots, sampling or elicitation. */
const EVERYTHING_TOOLS = [
  'echo', 'get-annotated-message', 'get-env', 'get-resource-links', 'get-resource-reference',
  'get-structured-content', 'get-sum', 'get-tiny-image', 'gzip-file-as-resource',
  'toggle-simulated-logging', 'toggle-subscriber-updates', 'trigger-long-running-operation',
].map((name) => `everything__${name}`);

/** Runs `body` with console.warn recorded; returns the warnings. */
async function warningsOf(t, body) {
  const warn = t.mock.method(console, 'warn', () => {});
  try {
    await body();
  } finally {
    warn.mock.restore();
  }
  return warn.mock.calls.map((call) => call.arguments.join(' '));
}

describe('McpServer under Node', () => {
  let everything;
  let server;
  before(async () => {
    everything = await startEverything();
    server = await McpServer.connect({ name: 'everything', url: everything.url });
  });
  after(async () => {
    await server?.close();
    await everything?.stop();
  });

  test("server-everything's tools are offered as everything__NAME with its descriptions and schemas", async (t) => {
    let own;
    const warnings = await warningsOf(t, async () => {
      own = await McpServer.connect({ name: 'everything', url: everything.url });
    });
    const tools = own.tools();
    await own.close();
    assert.deepEqual(tools.map((tool) => tool.name).sort(), EVERYTHING_TOOLS);
    // The task-only tool cannot be called without MCP tasks: left out, and said so.
    assert.ok(warnings.some((w) => /"simulate-research-query" is left out: it runs only as an MCP task/.test(w)), warnings.join('\n'));
    const sum = tools.find((tool) => tool.name === 'everything__get-sum');
    assert.equal(sum.description, 'Returns the sum of two numbers');
    assert.equal(sum.parameters.type, 'object');
    assert.deepEqual(Object.keys(sum.parameters.properties), ['a', 'b']);
    assert.deepEqual(sum.parameters.required, ['a', 'b']);
    assert.deepEqual(tools.find((tool) => tool.name === 'everything__get-tiny-image').parameters.properties, {});
  });

  test('its tools answer through HostTools as a session calls them: text, images, resources, structured content', async () => {
    const tools = new HostTools([], [server]);
    assert.ok(tools.definitions().some((d) => d.name === 'everything__echo' && JSON.parse(d.parametersJson).required[0] === 'message'));
    const call = (name, args) => tools.call(`everything__${name}`, JSON.stringify(args), { sessionId: 's' });

    assert.deepEqual(await call('echo', { message: 'hi' }), { text: 'Echo: hi', images: [] });
    assert.deepEqual(await call('get-sum', { a: 2, b: 3 }), { text: 'The sum of 2 and 3 is 5.', images: [] });

    const image = await call('get-tiny-image', {});
    assert.equal(image.text, "Here's the image you requested:\nThe image above is the MCP logo.");
    assert.equal(image.images.length, 1);
    assert.equal(image.images[0].mediaType, 'image/png');
    assert.deepEqual([...image.images[0].data.subarray(0, 8)], PNG_SIGNATURE);

    const links = (await call('get-resource-links', { count: 2 })).text;
    assert.match(links, /\n\[resource link: demo:\/\/resource\/dynamic\/blob\/1 \(Blob Resource 1\)\]\n\[resource link: demo:\/\/resource\/dynamic\/text\/2 \(Text Resource 2\)\]$/);
    const textResource = (await call('get-resource-reference', { resourceType: 'Text', resourceId: 1 })).text;
    assert.match(textResource, /^Returning resource reference for Resource 1:\n\[resource demo:\/\/resource\/dynamic\/text\/1\]\nResource 1: This is a plaintext resource/);
    const blobResource = (await call('get-resource-reference', { resourceType: 'Blob', resourceId: 1 })).text;
    assert.match(blobResource, /\[resource demo:\/\/resource\/dynamic\/blob\/1: [a-z/-]+, \d+ bytes; not shown: only text and images reach the model\]/);
    const weather = JSON.parse((await call('get-structured-content', { location: 'Chicago' })).text);
    assert.deepEqual(Object.keys(weather).sort(), ['conditions', 'humidity', 'temperature']);

    // The server's error result, and arguments that are no object, are the model's error results.
    await assert.rejects(call('get-sum', { a: 'x', b: 1 }), (e) => typeof e === 'string' && /^everything__get-sum failed: .*Input validation error/.test(e));
    await assert.rejects(tools.call('everything__echo', '[1]', { sessionId: 's' }), /everything__echo failed: the arguments must be a JSON object, not \[1\]/);
  });

  test('a call past its timeout fails naming the server and the tool, and the server goes on', async () => {
    const quick = await McpServer.connect({ name: 'everything', url: everything.url, timeoutMs: 1000 });
    try {
      const slow = quick.tools().find((tool) => tool.name === 'everything__trigger-long-running-operation');
      const started = Date.now();
      await assert.rejects(slow.call({ duration: 60, steps: 2 }), /^Error: the MCP server everything did not finish trigger-long-running-operation within 1 s$/);
      // 10x the 1 s timeout, so it fails only on a hang or when the call waits the 60 s
      // operation out.
      assert.ok(Date.now() - started < 10_000, `the call took ${Date.now() - started} ms`);
      const echo = quick.tools().find((tool) => tool.name === 'everything__echo');
      assert.equal(await echo.call({ message: 'still here' }), 'Echo: still here');
    } finally {
      await quick.close();
    }
  });

  test("the caller's fetch and headers carry every request", async () => {
    const seen = [];
    const recording = (url, init) => {
      seen.push(`${init?.method} ${new Headers(init?.headers).get('x-team')}`);
      return fetch(url, init);
    };
    const own = await McpServer.connect({ name: 'everything', url: everything.url, headers: { 'x-team': 'blue' }, fetch: recording });
    assert.equal(await own.tools()[0].call({ message: 'x' }), 'Echo: x');
    await own.close();
    // initialize, notifications/initialized, tools/list, tools/call; the session's DELETE.
    assert.ok(seen.filter((line) => line.startsWith('POST ')).length >= 4, seen.join('\n'));
    assert.ok(seen.includes('DELETE blue'), seen.join('\n'));
    assert.ok(seen.every((line) => line.endsWith(' blue')), seen.join('\n'));
  });

  test('a tool list the server announces as changed is offered once from the next ask, and a call finds the new tool', async (t) => {
    const fixture = await startListChangingServer();
    const source = await McpServer.connect({ name: 'fixture', url: fixture.url });
    t.after(async () => {
      await source.close();
      await fixture.stop();
    });
    const tools = new HostTools([], [source]);
    assert.deepEqual(tools.definitions().map((d) => d.name), ['fixture__add_tool']);
    assert.equal(await tools.changes(), undefined, 'nothing changed yet');
    const generation = source.generation();

    assert.deepEqual(await tools.call('fixture__add_tool', '{}', { sessionId: 's' }), { text: 'added late', images: [] });
    const changed = await tools.changes();
    assert.deepEqual(changed?.map((d) => d.name), ['fixture__add_tool', 'fixture__late']);
    assert.equal(source.generation(), generation + 1);
    assert.equal(await tools.changes(), undefined, 'offered once');
    assert.deepEqual(await tools.call('fixture__late', '{"word":"w"}', { sessionId: 's' }), { text: 'late:w', images: [] });

    // An announcement whose listing is the same does not offer the list again.
    await tools.call('fixture__add_tool', '{}', { sessionId: 's' });
    assert.equal(await tools.changes(), undefined);
    assert.equal(source.generation(), generation + 1);
  });

  test('a server that is down: connect rejects naming the server and its URL', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    await assert.rejects(
      McpServer.connect({ name: 'down', url }),
      (e) => e instanceof Error && e.message.startsWith(`the MCP server down at ${url} could not be connected: fetch failed`) && /ECONNREFUSED/.test(e.message),
    );
  });

  test('a server that stopped, or a closed McpServer, fails its calls naming the server', async () => {
    const short = await startEverything();
    const gone = await McpServer.connect({ name: 'gone', url: short.url });
    const echo = gone.tools().find((tool) => tool.name === 'gone__echo');
    await short.stop();
    const url = short.url.replaceAll('.', '\\.');
    await assert.rejects(echo.call({ message: 'x' }), new RegExp(`^Error: the MCP server gone \\(${url}\\) failed on echo: fetch failed`));
    await gone.close();
    await assert.rejects(echo.call({ message: 'x' }), new RegExp(`^Error: the MCP server gone \\(${url}\\) is closed`));
  });

  test('a name that cannot prefix tool names, or a URL that is none, is refused before connecting', async () => {
    for (const name of ['', 'a__b', 'trailing_', 'sp ace', 'x'.repeat(33)]) {
      await assert.rejects(McpServer.connect({ name, url: 'http://127.0.0.1:1/mcp' }), /is not a usable MCP server name/);
    }
    await assert.rejects(McpServer.connect({ name: 'docs', url: 'mcp here' }), /^Error: the MCP server docs: "mcp here" is not a URL$/);
  });
});

// server-everything sends no audio, no undecodable image and no result that is only
// structured content: those blocks, as the MCP schema defines them, are converted here.
test('result blocks the reference server does not send are named, not dropped', () => {
  const text = resultOf({
    content: [
      { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
      { type: 'image', data: 'not base64!', mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'file:///c.gif', blob: 'R0lGODlh', mimeType: 'image/gif' } },
    ],
  });
  assert.equal(text.text, '[audio: audio/wav, 3 bytes; not shown: only text and images reach the model]\n[image: image/png; not shown: its data is not valid base64]');
  assert.deepEqual(text.images, [{ mediaType: 'image/gif', data: new TextEncoder().encode('GIF89a') }]);
  assert.equal(resultOf({ content: [], structuredContent: { sum: 3 } }), '{"sum":3}');
  assert.throws(() => resultOf({ content: [], isError: true }), /^Error: the tool reported an error without a message$/);
});

const toolNames = (request) => JSON.parse(request.body).tools.map((t) => t.name);
const resultText = (block) => (typeof block.content === 'string' ? block.content : block.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n'));

describe('MCP servers in headless Chromium, through fetch', { skip: browserUnavailable() }, () => {
  let browser;
  let page;
  before(async () => {
    browser = await startBrowser();
    page = await browser.open('?empty=1');
  });
  after(async () => {
    await browser?.close();
  });

  /** Connects the page to `servers` ({name: url}), runs one input, returns the outcome. */
  function runWithServers(servers, llmUrl, input) {
    return page.evaluate(
      async ({ servers, llmUrl, input }) => {
        const { AgentSession, MemoryWorkspace, McpServer } = window.agentLib;
        const sources = await Promise.all(Object.entries(servers).map(([name, url]) => McpServer.connect({ name, url })));
        try {
          const session = await AgentSession.open({
            workspace: new MemoryWorkspace(),
            endpoints: { local: { baseUrl: llmUrl } },
            config: { endpoint: 'local', toolSources: sources, imageInput: true },
          });
          const outcome = await session.submit(input);
          session.close();
          return outcome;
        } finally {
          await Promise.all(sources.map((source) => source.close()));
        }
      },
      { servers, llmUrl, input },
    );
  }

  test("server-everything's tools are offered, called across origins, and their answers and image reach the model", async (t) => {
    const everything = await startEverything();
    t.after(() => everything.stop());
    const llm = await startScriptedServer({
      anthropic: [
        [tool('m1', 'everything__echo', { message: 'hi' }), tool('m2', 'everything__get-sum', { a: 2, b: 3 })],
        [tool('m3', 'everything__get-tiny-image', {})],
        [text('Done.')],
      ],
    });
    const outcome = await runWithServers({ everything: everything.url }, llm.url, 'Use the tools.');
    const requests = await llm.stop();
    assert.equal(outcome.stopReason, 'completed');
    assert.equal(outcome.finalText, 'Done.');
    for (const name of ['everything__echo', 'everything__get-sum', 'everything__get-tiny-image']) {
      assert.ok(toolNames(requests[0]).includes(name), name);
    }
    const [echo, sum] = toolResults(requests[1]);
    assert.equal(resultText(echo), 'Echo: hi');
    assert.equal(resultText(sum), 'The sum of 2 and 3 is 5.');
    const image = toolResults(requests[2]).at(-1);
    assert.equal(resultText(image), "Here's the image you requested:\nThe image above is the MCP logo.");
    const block = image.content.find((c) => c.type === 'image');
    assert.equal(block?.source?.type, 'base64', JSON.stringify(image));
    assert.equal(block.source.media_type, 'image/png');
    assert.deepEqual([...Buffer.from(block.source.data, 'base64').subarray(0, 8)], PNG_SIGNATURE);
    assert.deepEqual(browser.problems, []);
  });

  test('a tool list the server announces as changed mid-input is offered from the next request', async (t) => {
    const fixture = await startListChangingServer();
    t.after(() => fixture.stop());
    const llm = await startScriptedServer({
      anthropic: [
        [tool('a1', 'fixture__add_tool', {})],
        [tool('a2', 'fixture__late', { word: 'w' })],
        [text('Done.')],
      ],
    });
    const outcome = await runWithServers({ fixture: fixture.url }, llm.url, 'Add a tool, then use it.');
    const requests = await llm.stop();
    assert.equal(outcome.finalText, 'Done.');
    assert.ok(!toolNames(requests[0]).includes('fixture__late'));
    assert.ok(toolNames(requests[1]).includes('fixture__late'));
    assert.equal(resultText(toolResults(requests[2]).at(-1)), 'late:w');
  });

  test('a server that is down: connect rejects naming the server and its URL', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const message = await page.evaluate(async (url) => {
      try {
        await window.agentLib.McpServer.connect({ name: 'down', url });
        return 'connected';
      } catch (e) {
        return e.message;
      }
    }, url);
    assert.ok(message.startsWith(`the MCP server down at ${url} could not be connected: `), message);
  });
});
