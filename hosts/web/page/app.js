// The demo page: settings and an in-memory workspace on the left, the agent's event stream and
// the task box on the right. Plain DOM, no framework; bundled by scripts/build-web.sh.
//
// This file finds the page's elements, wires the parts together and starts the page. For
// automated tests it exposes `window.agentPage` (below); the status line's first word is
// mirrored in `document.body.dataset.state`.

import * as agentLib from '../src/index.js';
import { MemoryWorkspace } from '../src/index.js';
import { createEventStream } from './event-stream.js';
import { createRun, hasJspi } from './run.js';
import { createSettings } from './settings.js';
import { SAMPLE_FILES, createWorkspacePanel } from './workspace-panel.js';

const params = new URLSearchParams(location.search);
const $ = (selector) => document.querySelector(selector);

const events = $('#events');

// Settings and the workspace panel reach the run through callbacks; none of them is called
// before start() (at the end), by which time `run` is assigned.
let run;

const settings = createSettings({
  elements: {
    preset: $('#endpoint-preset'),
    baseUrl: $('#base-url'),
    apiKey: $('#api-key'),
    remember: $('#remember-key'),
    provider: $('#provider'),
    protocol: $('#protocol'),
    model: $('#model'),
    summary: $('#settings-summary'),
    note: $('#settings-note'),
  },
  server: params.get('server'),
  isSessionStale: (s) => run.isSessionStale(s),
});

const stream = createEventStream({ events, emptyState: $('#empty-state') });

const workspacePanel = createWorkspacePanel({
  elements: {
    files: $('#files'),
    summary: $('#workspace-summary'),
    view: $('#file-view'),
    viewTitle: $('#file-view-title'),
    download: $('#download'),
    upload: $('#upload'),
    reset: $('#reset-workspace'),
  },
  onChanges: stream.attributeChanges,
  isBusy: () => run.running,
  onReplaced: (why) => run.endSessionForNewWorkspace(why),
});

run = createRun({
  elements: {
    status: $('#status'),
    form: $('#task-form'),
    task: $('#task'),
    send: $('#send'),
    stop: $('#stop'),
    newSession: $('#new-session'),
    resetWorkspace: $('#reset-workspace'),
    upload: $('#upload'),
    uploadLabel: $('label[for="upload"]'),
    events,
    baseUrl: $('#base-url'),
  },
  settings,
  stream,
  getWorkspace: () => workspacePanel.workspace,
});

let markReady;
const ready = new Promise((resolve) => (markReady = resolve));

// The library itself, for tests that drive the API in this browser.
window.agentLib = agentLib;

window.agentPage = {
  get workspace() {
    return workspacePanel.workspace;
  },
  get session() {
    return run.session;
  },
  /** Replaces the workspace with these files (`{ 'path': 'text' }`). */
  seed(files) {
    workspacePanel.replace(new MemoryWorkspace(files ?? {}), 'The workspace was replaced');
  },
  /** The workspace as `{ path: text | Uint8Array }`. */
  exportWorkspace() {
    return workspacePanel.workspace.toObject();
  },
  events: run.events,
  ready,
};

function start() {
  settings.load();
  settings.sync();
  workspacePanel.set(new MemoryWorkspace(params.get('empty') === '1' ? {} : SAMPLE_FILES));
  workspacePanel.render();
  run.idle();
  if (!hasJspi) {
    const warning = $('#jspi-warning');
    warning.hidden = false;
    warning.textContent =
      'This browser lacks WebAssembly JSPI (JavaScript Promise Integration, WebAssembly.Suspending), ' +
      'which the agent needs to wait for the model inside WebAssembly. Use Chromium 137 or newer ' +
      '(Chrome, Edge, Brave, …). You can still browse, upload and download the workspace.';
    const send = $('#send');
    send.disabled = true;
    send.title = 'Needs WebAssembly JSPI (Chromium 137+)';
  }
  markReady();
}

start();
