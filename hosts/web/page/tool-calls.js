// Tool calls in the event stream: a block per call with its arguments, its live output, its
// result (folded when long) and the diff of the files it changed.

import { renderDiff } from './diffs.js';
import { h } from './dom.js';
import { lineCount, plural } from './format.js';

/** The argument worth showing next to the tool's name: its key, when it is short. */
function briefKeyOf(args) {
  if (!args || typeof args !== 'object') return undefined;
  for (const key of ['file_path', 'path', 'command', 'pattern', 'query', 'url', 'agent_id']) {
    const value = args[key];
    if (typeof value === 'string' && value && !value.includes('\n') && value.length <= 160) return key;
  }
  return undefined;
}

/** The arguments as `key value` rows, leaving out the one already shown next to the name. */
function renderArguments(args, briefKey) {
  if (args === undefined || args === null) return null;
  if (typeof args !== 'object' || Array.isArray(args)) {
    return h('pre', { class: 'tool-args', text: JSON.stringify(args, null, 2) });
  }
  const entries = Object.entries(args).filter(([key]) => key !== briefKey);
  if (entries.length === 0) return null;
  return h(
    'dl',
    { class: 'tool-args' },
    entries.map(([key, value]) => {
      let shown;
      if (typeof value === 'string') {
        const lines = lineCount(value);
        if (lines <= 1 && value.length <= 160) shown = h('code', { text: value.replace(/\n$/, '') });
        else if (lines <= 6) shown = h('pre', { text: value });
        else shown = h('details', {}, h('summary', { text: `${plural(lines, 'line')}` }), h('pre', { text: value }));
      } else {
        const compact = JSON.stringify(value);
        shown =
          compact.length <= 100
            ? h('code', { text: compact })
            : h('pre', { text: JSON.stringify(value, null, 2) });
      }
      return [h('dt', { text: key }), h('dd', {}, shown)];
    }),
  );
}

/**
 * The tool calls of the stream. `stream` places them: `agentView(agentId)` gives an agent's
 * open blocks and the element to append to, `append(parent, element)` and `scrollToEnd()`.
 */
export function createToolCalls(stream) {
  /** `${agent}/${callId}` -> the tool call's element and the file changes it made. */
  const calls = new Map();
  /** Tool calls started and not finished, oldest first: workspace changes go to the newest. */
  const openCalls = [];

  function start(event) {
    const callId = String(event.data?.call_id ?? '');
    const name = String(event.data?.tool_name ?? 'tool');
    const args = event.data.arguments;
    const { view, parent } = stream.agentView(event.agentId);
    view.text = null;
    view.reasoning = null;
    const briefKey = briefKeyOf(args);
    const element = h(
      'article',
      { class: 'tool-call', 'data-tool': name, 'data-call-id': callId, 'data-state': 'running', 'aria-busy': 'true' },
      h(
        'header',
        { class: 'tool-head' },
        h('span', { class: 'tool-name', text: name }),
        briefKey ? h('span', { class: 'tool-brief', text: args[briefKey], title: briefKey }) : null,
        h('span', { class: 'tool-state', text: 'running…' }),
      ),
      renderArguments(args, briefKey),
    );
    stream.append(parent, element);
    const call = { element, live: null, changes: new Map(), agentId: event.agentId };
    const key = `${event.agentId ?? ''}/${callId}`;
    calls.set(key, call);
    openCalls.push(key);
  }

  function outputDelta(event) {
    const call = calls.get(`${event.agentId ?? ''}/${event.data?.call_id}`);
    if (!call) return;
    if (!call.live) {
      call.live = h('pre', { class: 'tool-live' });
      call.element.append(call.live);
    }
    call.live.append(String(event.data.delta ?? ''));
    stream.scrollToEnd();
  }

  function end(event) {
    const callId = String(event.data?.call_id ?? '');
    const key = `${event.agentId ?? ''}/${callId}`;
    const index = openCalls.lastIndexOf(key);
    if (index >= 0) openCalls.splice(index, 1);
    let call = calls.get(key);
    if (!call) {
      start({ ...event, data: { ...event.data, arguments: undefined } });
      call = calls.get(key);
      openCalls.splice(openCalls.lastIndexOf(key), 1);
    }
    const { element } = call;
    call.live?.remove();
    const error = event.data.error;
    const failed = error !== undefined && error !== null;
    const text = failed ? String(error) : String(event.data.output ?? '');
    const lines = lineCount(text);
    element.dataset.state = failed ? 'error' : 'done';
    element.removeAttribute('aria-busy');
    if (failed) element.classList.add('failed');
    element.querySelector('.tool-state').textContent = failed ? 'failed' : 'done';
    const summary = failed
      ? `Error${lines > 1 ? ` · ${plural(lines, 'line')}` : ''}`
      : text
        ? `Output · ${plural(lines, 'line')}`
        : 'Output · empty';
    element.append(
      h(
        'details',
        { class: `tool-result${failed ? ' error' : ''}`, open: lines <= 12 },
        h('summary', { text: summary }),
        h('pre', { class: 'tool-output', text: text || '(no output)' }),
      ),
    );
    const diff = renderDiff(call.changes);
    if (diff) element.append(diff);
    stream.scrollToEnd();
  }

  /** Workspace changes go to the tool call running when they happen (the newest open one). */
  function attributeChanges(records) {
    const key = openCalls.at(-1);
    const call = key && calls.get(key);
    if (!call) return;
    for (const record of records) {
      const entry = call.changes.get(record.renamed ? record.from : record.path) ?? {
        from: record.from,
        before: record.before,
      };
      if (record.renamed) call.changes.delete(record.from);
      entry.after = record.after;
      call.changes.set(record.path, entry);
    }
  }

  function clear() {
    calls.clear();
    openCalls.length = 0;
  }

  return { start, outputDelta, end, attributeChanges, clear };
}
