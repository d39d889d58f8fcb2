// llm-transport over fetch(), under Node against a real HTTP server on 127.0.0.1.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { authHeaders, endpointUrl, llmTransport } from '../src/transport.js';

let server;
let base;
const seen = [];

before(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url, headers: req.headers });
    if (req.url.startsWith('/slow')) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'X-Request-Id': 'r1' });
      res.write('first');
      const timer = setInterval(() => res.write('.'), 200);
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (req.url.startsWith('/never')) return; // no head, ever
    res.writeHead(201, { 'content-type': 'text/plain' });
    res.write('one,');
    setTimeout(() => res.end('two'), 20);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

const body = new TextEncoder().encode('{}');
const request = (endpoint, path, extra = {}) => ({ endpoint, method: 'POST', path, headers: [['content-type', 'application/json']], body, timeoutMs: undefined, ...extra });

async function readAll(response) {
  const parts = [];
  for (let chunk = await response.nextChunk(); chunk !== undefined; chunk = await response.nextChunk()) {
    parts.push(new TextDecoder().decode(chunk));
  }
  return parts.join('');
}

test('each protocol sends its key its own way; Anthropic also opts in to browser access', () => {
  assert.deepEqual(authHeaders({ apiKey: 'k', protocol: 'anthropic-messages' }), [
    ['anthropic-dangerous-direct-browser-access', 'true'],
    ['x-api-key', 'k'],
  ]);
  assert.deepEqual(authHeaders({ apiKey: 'k', protocol: 'openai-responses' }), [['authorization', 'Bearer k']]);
  assert.deepEqual(authHeaders({ apiKey: 'k', protocol: 'chat-completions' }), [['authorization', 'Bearer k']]);
  assert.deepEqual(authHeaders({ apiKey: 'k', protocol: 'gemini' }), [['x-goog-api-key', 'k']]);
  assert.deepEqual(authHeaders({ protocol: 'gemini' }), []);
  assert.deepEqual(authHeaders({ apiKey: 'k', protocol: 'gemini', auth: 'bearer' }), [['authorization', 'Bearer k']]);
});

test('a base URL ending in /v1 is not doubled', () => {
  assert.equal(endpointUrl('https://api.openai.com/v1', '/v1/responses'), 'https://api.openai.com/v1/responses');
  assert.equal(endpointUrl('http://h:1/', '/v1/messages'), 'http://h:1/v1/messages');
});

test('a request streams its body chunk by chunk with status and lower-case headers', async () => {
  const transport = llmTransport({ endpoints: { local: { baseUrl: base, apiKey: 'sk-test', protocol: 'chat-completions' } }, signal: () => new AbortController().signal });
  const response = await transport.send(request('local', '/v1/chat/completions'));
  assert.ok(response instanceof transport.HttpResponse);
  assert.equal(response.status(), 201);
  assert.ok(response.headers().some(([k, v]) => k === 'content-type' && v === 'text/plain'));
  assert.equal(await readAll(response), 'one,two');
  const last = seen.at(-1);
  assert.equal(last.url, '/v1/chat/completions');
  assert.equal(last.headers.authorization, 'Bearer sk-test');
  assert.equal(last.headers['content-type'], 'application/json');
});

test('failures are the WIT variants, with messages naming what was wrong', async () => {
  const transport = llmTransport({ endpoints: { local: { baseUrl: base } }, signal: () => new AbortController().signal });
  await assert.rejects(transport.send(request('anthropic', '/v1/messages')), (e) => {
    assert.equal(e.tag, 'unknown-endpoint');
    assert.match(e.val, /"anthropic".*configured: local/);
    return true;
  });
  const refused = llmTransport({ endpoints: { gone: { baseUrl: 'http://127.0.0.1:9' } }, signal: () => new AbortController().signal });
  await assert.rejects(refused.send(request('gone', '/v1/messages')), (e) => e.tag === 'connect' && /127\.0\.0\.1:9\/v1\/messages/.test(e.val));
  await assert.rejects(transport.send(request('local', '/never', { timeoutMs: 200n })), (e) => e.tag === 'timeout' && /200 ms/.test(e.val));
});

test("the session's interruption cancels a request waiting for its head and a body being read", async () => {
  let input = new AbortController();
  const transport = llmTransport({ endpoints: { local: { baseUrl: base } }, signal: () => input.signal });
  const waiting = transport.send(request('local', '/never'));
  setTimeout(() => input.abort(), 50);
  await assert.rejects(waiting, (e) => e.tag === 'cancelled');

  input = new AbortController();
  const response = await transport.send(request('local', '/slow'));
  assert.equal(new TextDecoder().decode(await response.nextChunk()), 'first');
  input.abort();
  await assert.rejects(async () => {
    for (;;) if ((await response.nextChunk()) === undefined) return;
  }, (e) => e.tag === 'cancelled');
});
