// The conversation pane (#events): the agent's events as they stream in — text, reasoning,
// tool calls, notes — with each subagent's events in a section of their own, kept scrolled to
// the end unless the person scrolled up to read.

import { h } from './dom.js';
import { plural } from './format.js';
import { createToolCalls } from './tool-calls.js';

/** `events` is the #events log, `emptyState` the placeholder it shows before anything happens. */
export function createEventStream({ events, emptyState }) {
  let stickToBottom = true;
  let autoScrollTop = -1;
  let scrollScheduled = false;
  /** Per agent ('' = the main one): its open text and reasoning blocks and its stream section. */
  const agents = new Map();
  /** Inputs this page showed itself, not to be shown again when USER_INPUT echoes them. */
  const echoes = [];

  events.addEventListener('scroll', () => {
    if (Math.abs(events.scrollTop - autoScrollTop) <= 1) return; // our own scroll
    const { scrollTop, clientHeight, scrollHeight } = events;
    stickToBottom = scrollTop + clientHeight >= scrollHeight - 32;
  });

  function scrollToEnd() {
    if (!stickToBottom || scrollScheduled) return;
    scrollScheduled = true;
    requestAnimationFrame(() => {
      scrollScheduled = false;
      if (!stickToBottom) return;
      events.scrollTop = events.scrollHeight;
      autoScrollTop = events.scrollTop;
    });
  }

  function agentView(agentId) {
    const key = agentId ?? '';
    let view = agents.get(key);
    if (!view) {
      view = { text: null, reasoning: null, section: null };
      agents.set(key, view);
    }
    if (!agentId) return { view, parent: events };
    // A subagent's events interleaved with others' start a new section rather than go back up.
    if (!view.section || view.section !== events.lastElementChild) {
      view.section = h(
        'section',
        { class: 'subagent', 'data-agent-id': agentId, 'aria-label': `Subagent ${agentId}` },
        h('div', { class: 'agent-label', text: `subagent ${agentId}` }),
      );
      events.append(view.section);
      view.text = null;
      view.reasoning = null;
    }
    return { view, parent: view.section };
  }

  function append(parent, element) {
    emptyState?.remove();
    parent.append(element);
    scrollToEnd();
    return element;
  }

  const toolCalls = createToolCalls({ agentView, append, scrollToEnd });

  function addNote(kind, text, agentId) {
    const { parent } = agentView(agentId);
    return append(parent, h('div', { class: `note ${kind}`, role: kind === 'error' ? 'alert' : undefined }, text));
  }

  function addUserInput(text, agentId) {
    const { parent, view } = agentView(agentId);
    view.text = null;
    view.reasoning = null;
    return append(
      parent,
      h(
        'div',
        { class: `user-input${agentId ? ' task' : ''}` },
        h('div', { class: 'who', text: agentId ? 'Task' : 'You' }),
        h('div', { class: 'content', text }),
      ),
    );
  }

  function addSteeringNote(text) {
    return append(
      events,
      h(
        'div',
        { class: 'note steering', 'data-state': 'queued' },
        h('span', { class: 'note-label', text: 'Steering' }),
        h('span', { class: 'content', text }),
        h('span', { class: 'note-state', text: 'queued' }),
      ),
    );
  }

  function textBlock(agentId) {
    const { view, parent } = agentView(agentId);
    if (!view.text || !view.text.isConnected) {
      view.text = append(parent, h('div', { class: 'assistant-text' }));
      view.text.append(document.createTextNode(''));
    }
    return view.text;
  }

  function reasoningBlock(agentId) {
    const { view, parent } = agentView(agentId);
    if (!view.reasoning || !view.reasoning.isConnected) {
      const body = h('div', { class: 'reasoning-text' });
      body.append(document.createTextNode(''));
      view.reasoning = append(parent, h('details', { class: 'reasoning' }, h('summary', { text: 'Reasoning' }), body));
    }
    return view.reasoning;
  }

  function show(event) {
    const { kind, data = {}, agentId } = event;
    switch (kind) {
      case 'USER_INPUT': {
        const content = String(data.content ?? '');
        const echo = agentId ? -1 : echoes.indexOf(content);
        if (echo >= 0) echoes.splice(echo, 1);
        else addUserInput(content, agentId);
        break;
      }
      case 'ASSISTANT_TEXT_START':
        agentView(agentId).view.text = null;
        textBlock(agentId);
        break;
      case 'ASSISTANT_TEXT_DELTA':
        textBlock(agentId).firstChild.appendData(String(data.delta ?? ''));
        scrollToEnd();
        break;
      case 'ASSISTANT_TEXT_END': {
        // The full text also comes at the end: it fills a block whose deltas never came.
        const { view } = agentView(agentId);
        const text = typeof data.text === 'string' ? data.text : '';
        if (view.text?.isConnected && !view.text.textContent && text) view.text.firstChild.appendData(text);
        else if (!view.text && text) textBlock(agentId).firstChild.appendData(text);
        if (view.text && !view.text.textContent) view.text.remove();
        view.text = null;
        break;
      }
      case 'REASONING_START':
        agentView(agentId).view.reasoning = null;
        reasoningBlock(agentId);
        break;
      case 'REASONING_DELTA':
        reasoningBlock(agentId).querySelector('.reasoning-text').firstChild.appendData(String(data.delta ?? ''));
        scrollToEnd();
        break;
      case 'REASONING_END': {
        const { view } = agentView(agentId);
        const body = view.reasoning?.querySelector('.reasoning-text');
        if (view.reasoning && !body?.textContent) view.reasoning.remove();
        view.reasoning = null;
        break;
      }
      case 'TOOL_CALL_START':
        toolCalls.start(event);
        break;
      case 'TOOL_CALL_OUTPUT_DELTA':
        toolCalls.outputDelta(event);
        break;
      case 'TOOL_CALL_END':
        toolCalls.end(event);
        break;
      case 'STEERING_INJECTED': {
        // The page showed the message as queued when it was sent: mark that one delivered.
        const content = String(data.content ?? '');
        const pending = !agentId
          ? [...events.querySelectorAll('.note.steering[data-state="queued"]')].find(
              (note) => note.querySelector('.content').textContent === content,
            )
          : undefined;
        if (pending) {
          pending.dataset.state = 'injected';
          pending.querySelector('.note-state').textContent = 'delivered';
        } else {
          const note = addNote('steering', '', agentId);
          note.dataset.state = 'injected';
          note.append(
            h('span', { class: 'note-label', text: 'Steering' }),
            h('span', { class: 'content', text: content }),
            h('span', { class: 'note-state', text: 'delivered' }),
          );
        }
        agentView(agentId).view.text = null;
        break;
      }
      case 'PLAN_UPDATED': {
        // The model's checklist: [x] done, [>] in progress, [ ] to do (text, never HTML).
        const marks = { completed: '[x]', in_progress: '[>]', pending: '[ ]' };
        const steps = (data.plan ?? []).map((s) => `${marks[s.status] ?? '[ ]'} ${s.step}`);
        const lines = [data.explanation, ...steps].filter(Boolean);
        addNote('plan', `Plan\n${lines.join('\n')}`, agentId);
        agentView(agentId).view.text = null;
        break;
      }
      case 'WARNING':
        addNote('warning', `Warning: ${data.message ?? ''}`, agentId);
        break;
      case 'ERROR':
        addNote('error', `Error${data.kind ? ` (${data.kind})` : ''}: ${data.message ?? ''}`, agentId);
        break;
      case 'TURN_LIMIT':
        addNote('limit', `Limit reached: ${data.limit ?? 'limit'} (${data.value ?? '?'})`, agentId);
        break;
      case 'LOOP_DETECTION':
        addNote('loop', `Loop detected: ${data.message ?? ''}`, agentId);
        break;
      case 'PROCESSING_END': {
        const stop = data?.stop_reason ?? 'done';
        const rounds = Number(data.rounds ?? 0);
        addNote('end', `${stop} · ${plural(rounds, 'tool round')}`, agentId);
        break;
      }
      case 'SESSION_START':
        if (agentId) addNote('session', 'started', agentId);
        break;
      case 'SESSION_END':
        if (agentId) addNote('session', `ended${data.reason ? ` (${data.reason})` : ''}`, agentId);
        else if (data.reason && data.reason !== 'closed') addNote('session', `Session ended (${data.reason})`);
        break;
      default:
        break;
    }
  }

  return {
    /** Renders one event of a session. */
    show,
    addNote,
    addSteeringNote,
    /** Shows what the person sent, and remembers it so the USER_INPUT echo is not shown twice. */
    showOwnInput(text) {
      echoes.push(text);
      addUserInput(text);
    },
    /** After a run, inputs whose echo never came are not waited for any more. */
    forgetEchoes() {
      echoes.length = 0;
    },
    attributeChanges: toolCalls.attributeChanges,
    /** Back to the empty state, for a new session. */
    clear() {
      echoes.length = 0;
      agents.clear();
      toolCalls.clear();
      events.replaceChildren(emptyState);
      stickToBottom = true;
    },
  };
}
