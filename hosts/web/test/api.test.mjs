// The library API (AgentSession and friends) in headless Chromium, through the page's
// `window.agentLib`: JavaScript tools, approvals, subagents, the event iterator, and a session
// reopened from its snapshot. Each test drives the real component against the scripted server.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { browserUnavailable, startBrowser } from './support/browser.mjs';
import { startScriptedServer } from './support/processes.mjs';
import { text, tool, toolResults } from './support/replies.mjs';

const unavailable = browserUnavailable();

const resultText = (block) => (typeof block.content === 'string' ? block.content : block.content.map((c) => c.text).join(''));

describe('the library API in headless Chromium', { skip: unavailable }, () => {
  let browser;
  let page;
  before(async () => {
    browser = await startBrowser();
    page = await browser.open('?empty=1');
  });
  after(async () => {
    await browser?.close();
  });

  test('a JavaScript tool is offered to the model, called, and its failure is an error result', async () => {
    const server = await startScriptedServer({
      anthropic: [
        [tool('t1', 'lookup_weather', { city: 'Oslo' })],
        [tool('t2', 'lookup_weather', { city: 'Atlantis' })],
        [text('Oslo is cold.')],
      ],
    });
    const outcome = await page.evaluate(async (url) => {
      const { AgentSession, MemoryWorkspace } = window.agentLib;
      const session = await AgentSession.open({
        workspace: new MemoryWorkspace(),
        endpoints: { local: { baseUrl: url } },
        config: {
          endpoint: 'local',
          tools: [{
            name: 'lookup_weather',
            description: 'Current weather of a city.',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            async call({ city }) {
              if (city === 'Atlantis') throw new Error(`no such city: ${city}`);
              return { city, celsius: -3 };
            },
          }],
        },
      });
      const outcome = await session.submit('Weather in Oslo?');
      session.close();
      return outcome;
    }, server.url);
    assert.equal(outcome.stopReason, 'completed');
    assert.equal(outcome.finalText, 'Oslo is cold.');
    const requests = await server.stop();
    assert.ok(JSON.parse(requests[0].body).tools.some((t) => t.name === 'lookup_weather'));
    const [ok, failed] = toolResults(requests[2]);
    assert.equal(resultText(ok), '{"city":"Oslo","celsius":-3}');
    assert.equal(failed.is_error, true);
    assert.match(resultText(failed), /lookup_weather failed: no such city: Atlantis/);
  });

  test('checkpoints: three inputs change files, restore(1) puts every byte back, the model is told', async () => {
    const server = await startScriptedServer({
      anthropic: [
        [tool('r1', 'read_file', { file_path: 'a.txt' })],
        [tool('w1', 'write_file', { file_path: 'a.txt', content: 'a1' })],
        [text('Done 1.')],
        [tool('w2', 'write_file', { file_path: 'b.txt', content: 'b' })],
        [text('Done 2.')],
        [tool('w3', 'write_file', { file_path: 'deep/c.txt', content: 'c' })],
        [text('Done 3.')],
        [text('Noted.')],
      ],
    });
    const result = await page.evaluate(async (url) => {
      const { AgentSession, MemoryWorkspace } = window.agentLib;
      const workspace = new MemoryWorkspace({ 'a.txt': 'a0', 'keep.md': 'kept' });
      const session = await AgentSession.open({ workspace, endpoints: { local: { baseUrl: url } }, config: { endpoint: 'local' } });
      for (const input of ['input 1', 'input 2', 'input 3']) await session.submit(input);
      const changed = workspace.toObject();
      const listed = session.checkpoints().map((c) => `${c.input}:${c.label}:${c.files}`);
      const undone = session.undo();
      const restored = session.restore(1);
      let error;
      try {
        session.restore(2);
      } catch (e) {
        error = `${e.kind}: ${e.detail}`;
      }
      await session.submit('input 4');
      session.close();
      return { changed, listed, undone, restored, after: workspace.toObject(), error };
    }, server.url);
    assert.deepEqual(result.changed, { 'a.txt': 'a1', 'b.txt': 'b', 'deep/c.txt': 'c', 'keep.md': 'kept' });
    assert.deepEqual(result.listed, ['1:input 1:2', '2:input 2:2', '3:input 3:3']);
    assert.deepEqual(result.undone, { input: 3, restored: [], removed: ['deep/c.txt'], failed: [] });
    assert.deepEqual(result.restored, { input: 1, restored: ['a.txt'], removed: ['b.txt'], failed: [] });
    assert.deepEqual(result.after, { 'a.txt': 'a0', 'deep/': null, 'keep.md': 'kept' });
    assert.match(result.error, /^checkpoints: there is no checkpoint before input 2/);
    const requests = await server.stop();
    const { content } = JSON.parse(requests.at(-1).body).messages.at(-1);
    const last = typeof content === 'string' ? content : content.map((b) => b.text ?? '').join('');
    assert.match(last, /restored the workspace's files to how they were before input 3 \("deep\/c.txt"\)/);
    assert.match(last, /before input 1 \("a.txt", "b.txt"\)[^]*input 4$/);
  });

  test('a denied approval leaves the workspace untouched and tells the model why', async () => {
    const server = await startScriptedServer({
      anthropic: [[tool('w1', 'write_file', { file_path: 'secret.txt', content: 'x' })], [text('Understood.')]],
    });
    const result = await page.evaluate(async (url) => {
      const { AgentSession, MemoryWorkspace } = window.agentLib;
      const workspace = new MemoryWorkspace();
      const asked = [];
      const session = await AgentSession.open({
        workspace,
        endpoints: { local: { baseUrl: url } },
        config: { endpoint: 'local' },
        approve: async (request) => {
          asked.push(request.toolName + ' ' + request.arguments.file_path);
          return 'writes are not allowed in this demo';
        },
      });
      await session.submit('Write a secret.');
      return { asked, exists: workspace.exists('secret.txt') };
    }, server.url);
    assert.deepEqual(result, { asked: ['write_file secret.txt'], exists: false });
    const [denied] = toolResults((await server.stop())[1]);
    assert.equal(denied.is_error, true);
    assert.match(resultText(denied), /writes are not allowed in this demo/);
  });

  test('subagents run as their own instances, scoped to a folder, their events tagged', async () => {
    const server = await startScriptedServer({
      anthropic: [
        [tool('p1', 'spawn_agent', { task: 'Write the docs index.', working_dir: 'docs' })],
        [tool('p2', 'wait', { agent_id: 'agent-1' })],
        [text('The subagent wrote docs/index.md.')],
      ],
      routes: [{
        marker: '<subagent>',
        anthropic: [
          [tool('c1', 'write_file', { file_path: 'index.md', content: '# Docs\n' })],
          [text('Wrote index.md in docs.')],
        ],
      }],
    });
    const result = await page.evaluate(async (url) => {
      const { AgentSession, MemoryWorkspace } = window.agentLib;
      const workspace = new MemoryWorkspace({ 'docs/': null });
      const session = await AgentSession.open({ workspace, endpoints: { local: { baseUrl: url } }, config: { endpoint: 'local' } });
      const tagged = [];
      session.on((e) => e.agentId && tagged.push(`${e.agentId} ${e.kind}`));
      const outcome = await session.submit('Get the docs written.');
      session.close();
      return { outcome, files: workspace.toObject(), tagged };
    }, server.url);
    assert.equal(result.outcome.finalText, 'The subagent wrote docs/index.md.');
    assert.deepEqual(result.files, { 'docs/index.md': '# Docs\n' });
    assert.ok(result.tagged.includes('agent-1 TOOL_CALL_END'), result.tagged.join('\n'));
    const requests = await server.stop();
    const waited = toolResults(requests.find((r) => !r.body.includes('<subagent>') && r.body.includes('"p2"')));
    const report = JSON.parse(resultText(waited.at(-1)));
    assert.deepEqual([report.agent_id, report.success, report.output], ['agent-1', true, 'Wrote index.md in docs.']);
  });

  test('a token budget bounds the session and its subagents together', async () => {
    // Each reply reports 20,042 tokens (more than the estimate each request reserves). Alone,
    // the parent and the child would each stay under 50,000 and answer; together they pass
    // it, so neither sends its third request, however their requests interleave.
    const big = (blocks) => ({ blocks, input_tokens: 20000 });
    const server = await startScriptedServer({
      anthropic: [
        big([tool('p1', 'spawn_agent', { task: 'Write two notes.' })]),
        big([tool('p2', 'wait', { agent_id: 'agent-1' })]),
        big([text('Never sent: the budget is spent.')]),
      ],
      routes: [{
        marker: '<subagent>',
        anthropic: [
          big([tool('c1', 'write_file', { file_path: 'a.md', content: 'a\n' })]),
          big([tool('c2', 'write_file', { file_path: 'b.md', content: 'b\n' })]),
          big([text('Never sent either.')]),
        ],
      }],
    });
    const result = await page.evaluate(async (url) => {
      const { AgentSession, MemoryWorkspace } = window.agentLib;
      const session = await AgentSession.open({
        workspace: new MemoryWorkspace(),
        endpoints: { local: { baseUrl: url } },
        config: { endpoint: 'local', limits: { maxSessionTokens: 50000 } },
      });
      const limits = [];
      session.on((e) => e.kind === 'TURN_LIMIT' && limits.push(`${e.agentId ?? 'parent'} ${e.data.limit}`));
      const outcome = await session.submit('Get the notes written.');
      const spent = session.treeSpending;
      session.close();
      return { outcome, limits, spent };
    }, server.url);
    assert.equal(result.outcome.stopReason, 'turn-limit');
    // The parent stops at the latest after its wait; a child closed with it may stop first.
    assert.ok(result.limits.includes('parent max_session_tokens'), result.limits.join('\n'));
    assert.ok(result.spent.tokens >= 50000, JSON.stringify(result.spent));
    const requests = await server.stop();
    const children = requests.filter((r) => r.body.includes('<subagent>'));
    const parents = requests.length - children.length;
    assert.ok(parents >= 1 && parents <= 2, `the parent never sent its third request: ${parents}`);
    assert.ok(children.length <= 2, `the child never sent its third request: ${children.length}`);
  });

  test('compact() summarises the older turns, emits COMPACTION, and the next request starts from the summary', async () => {
    const server = await startScriptedServer({
      anthropic: [
        [tool('r1', 'read_file', { file_path: 'big.txt' })],
        [text('It is big.')],
        [text('Second answer.')],
        [text('TASK: inspect big.txt. STATE: read, it is big.')],
        [text('Third answer.')],
      ],
    });
    const result = await page.evaluate(async (url) => {
      const { AgentSession, MemoryWorkspace } = window.agentLib;
      const workspace = new MemoryWorkspace({ 'big.txt': 'line of text\n'.repeat(2000) });
      const session = await AgentSession.open({ workspace, endpoints: { local: { baseUrl: url } }, config: { endpoint: 'local' } });
      const events = [];
      session.on((event) => event.kind === 'COMPACTION' && events.push(event.data));
      await session.submit('Look at big.txt');
      await session.submit('Anything else?');
      const report = await session.compact();
      const outcome = await session.submit('Go on.');
      const history = session.history();
      session.close();
      return { report, events, outcome, first: history[0] };
    }, server.url);
    assert.equal(result.report.summarised, true);
    assert.ok(result.report.tokensAfter < result.report.tokensBefore, JSON.stringify(result.report));
    assert.ok(result.report.turnsAfter < result.report.turnsBefore);
    assert.equal(result.events.length, 1);
    assert.equal(result.events[0].trigger, 'requested');
    assert.equal(result.events[0].stage, 'summarised');
    assert.equal(result.outcome.finalText, 'Third answer.');
    assert.equal(result.first.type, 'system');
    assert.match(result.first.content, /^Summary of the conversation so far[^]*TASK: inspect big.txt/);
    const requests = await server.stop();
    const summaryRequest = JSON.parse(requests[3].body);
    assert.match(JSON.stringify(summaryRequest.system), /compact the conversation/);
    assert.match(summaryRequest.messages[0].content[0].text, /## User\nLook at big.txt/);
    const last = requests.at(-1).body;
    assert.match(last, /Summary of the conversation so far/);
    assert.doesNotMatch(last, /line of text/, 'the old tool output is not sent again');
  });

  test('a cut 1 MB tool output is saved and read back whole through the path in the marker', async () => {
    const saved = '/agent-outputs/s-1/dump-d1.txt';
    const pages = Array.from({ length: 25 }, (_, k) => [tool(`r${k}`, 'read_file', { file_path: saved, offset: 1 + k * 400, limit: 400 })]);
    const server = await startScriptedServer({ anthropic: [[tool('d1', 'dump', {})], ...pages, [text('Read it all.')]] });
    const result = await page.evaluate(async (url) => {
      const { AgentSession, MemoryWorkspace } = window.agentLib;
      const big = Array.from({ length: 10000 }, (_, i) => `output line ${String(i).padStart(5, '0')}`.padEnd(99) + '\n').join('');
      const workspace = new MemoryWorkspace({ 'a.txt': 'a' });
      const session = await AgentSession.open({
        workspace,
        endpoints: { local: { baseUrl: url } },
        config: {
          endpoint: 'local',
          sessionId: 's-1',
          tools: [{ name: 'dump', description: 'Prints a lot.', parameters: { type: 'object', properties: {} }, call: () => big }],
        },
      });
      const outcome = await session.submit('Dump, then read it back.');
      session.close();
      return { outcome, big, files: Object.keys(workspace.toObject()) };
    }, server.url);
    assert.equal(result.outcome.finalText, 'Read it all.');
    assert.equal(result.big.length, 1000000);
    assert.deepEqual(result.files, ['a.txt'], 'the saved output is not in the workspace');
    const requests = await server.stop();
    const marker = resultText(toolResults(requests[1])[0]);
    assert.ok(marker.length < 40000);
    assert.match(marker, /The full output was saved to \/agent-outputs\/s-1\/dump-d1.txt: read it with read_file/);
    let readBack = '';
    for (let n = 2; n < 27; n++) {
      const pageText = resultText(toolResults(requests[n]).at(-1));
      for (const line of pageText.split('\n')) {
        if (line === '' || line.startsWith('[')) continue;
        readBack += `${line.slice(line.indexOf(' | ') + 3)}\n`;
      }
    }
    assert.equal(readBack, result.big);
  });

  test('events() iterates until SESSION_END, and a snapshot reopens the conversation', async () => {
    const server = await startScriptedServer({ anthropic: [[text('First answer.')], [text('Second answer.')]] });
    const result = await page.evaluate(async (url) => {
      const { AgentSession, MemoryWorkspace } = window.agentLib;
      const options = { workspace: new MemoryWorkspace(), endpoints: { local: { baseUrl: url } }, config: { endpoint: 'local' } };
      const first = await AgentSession.open(options);
      const kinds = [];
      const collected = (async () => {
        for await (const event of first.events()) kinds.push(event.kind);
      })();
      await first.submit('Remember the word kiwi.');
      const snapshot = first.snapshot();
      first.close();
      await collected;
      const second = await AgentSession.open({ ...options, snapshot });
      const outcome = await second.submit('Which word?');
      return { kinds, sameId: second.id === first.id, turns: second.history().length, outcome };
    }, server.url);
    assert.equal(result.kinds[0], 'SESSION_START');
    assert.equal(result.kinds.at(-1), 'SESSION_END');
    assert.ok(result.kinds.includes('ASSISTANT_TEXT_DELTA'));
    assert.equal(result.sameId, true);
    assert.equal(result.outcome.finalText, 'Second answer.');
    const requests = await server.stop();
    assert.match(requests[1].body, /Remember the word kiwi\..*First answer\..*Which word\?/s);
  });

  test('a follow-up queued during a run is handled after it, and abort closes the session', async () => {
    const server = await startScriptedServer({
      anthropic: [
        { blocks: [text('Working on the first input.')], delay_ms: 200 },
        [text('Follow-up handled.')],
        { blocks: [text('This reply is cut short by the abort, piece by piece.')], delay_ms: 1500 },
      ],
    });
    const result = await page.evaluate(async (url) => {
      const { AgentSession, MemoryWorkspace } = window.agentLib;
      const session = await AgentSession.open({ workspace: new MemoryWorkspace(), endpoints: { local: { baseUrl: url } }, config: { endpoint: 'local' } });
      const kinds = [];
      session.on((e) => kinds.push(e.kind));
      const first = session.submit('First input.');
      session.followUp('Then this follow-up.');
      const followed = await first;
      const second = session.submit('Something slow.');
      // The abort comes once the slow reply streams: its request was sent, and it is cut. The
      // timeout guards against a hang only: the first piece comes after about 6 s.
      const slow = 'This reply is cut short by the abort, piece by piece.';
      await new Promise((resolve, reject) => {
        session.on((e) => e.kind === 'ASSISTANT_TEXT_DELTA' && slow.startsWith(e.data.delta) && resolve());
        setTimeout(() => reject(new Error('the slow reply never streamed')), 60_000);
      });
      session.abort();
      const aborted = await second;
      await new Promise((resolve) => setTimeout(resolve, 0));
      let afterwards;
      try {
        await session.submit('Anyone there?');
      } catch (e) {
        afterwards = `${e.name} ${e.kind}`;
      }
      return { followed, aborted, state: session.state, lastKind: kinds.at(-1), afterwards };
    }, server.url);
    assert.equal(result.followed.finalText, 'Follow-up handled.');
    assert.equal(result.aborted.stopReason, 'aborted');
    assert.equal(result.state, 'closed');
    assert.equal(result.lastKind, 'SESSION_END');
    assert.equal(result.afterwards, 'AgentError closed');
    const requests = await server.stop();
    assert.equal(requests.length, 3);
    assert.match(requests[1].body, /First input\..*Working on the first input\..*Then this follow-up\./s);
  });

  test('the page reports no errors', () => {
    assert.deepEqual(browser.problems, []);
  });
});

if (unavailable) console.log(`browser API tests skipped: ${unavailable}`);
