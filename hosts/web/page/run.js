// The session and its runs: sending a task (opening a session when there is none), steering
// while it works, stopping it, starting a new session, and the status line.

import { AgentSession } from '../src/index.js';
import { errorMessage } from './format.js';
import { configKey } from './settings.js';

/** Whether this browser can run the agent: it waits for the model inside WebAssembly. */
export const hasJspi = typeof WebAssembly.Suspending === 'function';

/**
 * `elements`: the status line, the task form (`form`, `task`, `send`, `stop`, `newSession`), the
 * controls disabled while the agent works (`resetWorkspace`, `upload`, `uploadLabel`), `events`
 * (marked busy meanwhile) and `baseUrl` (focused when it is missing). `settings` is the settings
 * form, `stream` the event stream, `getWorkspace()` the workspace a new session works on.
 */
export function createRun({ elements: ui, settings, stream, getWorkspace }) {
  let session = null;
  let openedWith = null;
  let running = false;
  /** Bumped by "New session": outcomes and events of older sessions are not shown. */
  let generation = 0;
  /** Steering typed before the session was open, delivered once it is. */
  let pendingSteering = [];
  let stopRequested = false;
  /** Every event delivered by any session of this page, in order (for tests). */
  const deliveredEvents = [];

  function setStatus(text) {
    ui.status.textContent = text;
    ui.status.title = text;
    // The first word, for tests and for the stylesheet.
    document.body.dataset.state = text.split(/[\s:]/)[0];
  }

  function setRunning(on) {
    running = on;
    ui.send.textContent = on ? 'Steer' : 'Send';
    ui.send.title = on ? 'Send this message to the agent while it works' : 'Start the task';
    ui.stop.disabled = !on;
    ui.resetWorkspace.disabled = on;
    ui.upload.disabled = on;
    ui.uploadLabel.classList.toggle('disabled', on);
    ui.uploadLabel.setAttribute('aria-disabled', String(on));
    ui.events.setAttribute('aria-busy', String(on));
  }

  async function openSession() {
    settings.sync();
    const s = settings.current();
    const gen = generation;
    const opened = await AgentSession.open({
      workspace: getWorkspace(),
      endpoints: settings.endpoints,
      coreUrl: new URL('./gen/', location.href),
      config: { provider: s.provider, model: s.model, endpoint: s.preset, protocol: s.protocol },
    });
    opened.on((event) => {
      deliveredEvents.push(event);
      if (gen === generation) stream.show(event);
    });
    openedWith = configKey(s);
    return opened;
  }

  async function sendTask() {
    const text = ui.task.value.trim();
    if (!text) {
      ui.task.focus();
      return;
    }
    if (running) {
      ui.task.value = '';
      if (session && session.state === 'processing') session.steer(text);
      else pendingSteering.push(text);
      stream.addSteeringNote(text);
      return;
    }
    if (!hasJspi) return;
    const s = settings.current();
    if (!s.baseUrl) {
      setStatus('error: the endpoint has no base URL');
      ui.baseUrl.focus();
      return;
    }
    ui.task.value = '';
    const gen = generation;
    stopRequested = false;
    setRunning(true);
    setStatus('running');
    const firstEvent = deliveredEvents.length;
    try {
      if (!session || session.state === 'closed') {
        if (session) stream.addNote('info', 'The previous session has ended; this task starts a new one.');
        stream.addNote('session', `New session · ${s.model} · ${settings.label(s.preset)} (${s.protocol})`);
        stream.showOwnInput(text);
        const opened = await openSession();
        if (gen !== generation) {
          opened.close();
          return;
        }
        session = opened;
        settings.hideNote();
      } else {
        stream.showOwnInput(text);
      }
      for (const message of pendingSteering.splice(0)) session.steer(message);
      if (stopRequested) {
        setStatus('cancelled');
        return;
      }
      const outcome = await session.submit(text);
      if (gen === generation) setStatus(outcome.stopReason);
    } catch (e) {
      if (gen === generation) {
        setStatus(`error: ${errorMessage(e)}`);
        // An LLM failure already came as an ERROR event; anything else is shown here.
        const shown = deliveredEvents.slice(firstEvent).some((event) => event.kind === 'ERROR' && !event.agentId);
        if (!shown) stream.addNote('error', errorMessage(e));
      }
    } finally {
      if (gen === generation) {
        stream.forgetEchoes();
        setRunning(false);
      }
    }
  }

  ui.form.addEventListener('submit', (event) => {
    event.preventDefault();
    sendTask();
  });

  ui.task.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      sendTask();
    }
  });

  ui.stop.addEventListener('click', () => {
    if (!running) return;
    stopRequested = true;
    if (session && session.state === 'processing') session.cancel();
  });

  ui.newSession.addEventListener('click', () => {
    generation += 1;
    const old = session;
    session = null;
    openedWith = null;
    if (old) {
      if (old.state === 'processing') old.abort();
      else old.close();
    }
    pendingSteering = [];
    stream.clear();
    setRunning(false);
    setStatus('idle');
    settings.hideNote();
    ui.task.focus();
  });

  return {
    get session() {
      return session;
    },
    get running() {
      return running;
    },
    events: deliveredEvents,
    /** Whether a live session was opened with other settings than `s`. */
    isSessionStale(s) {
      return session && session.state !== 'closed' && openedWith !== configKey(s);
    },
    /** The workspace was replaced: a live session, bound to the old one, ends. */
    endSessionForNewWorkspace(why) {
      if (session && session.state !== 'closed') {
        session.close();
        stream.addNote('info', `${why}: the next task starts a new session on the new files.`);
      }
    },
    /** Nothing running, status idle: the state the page starts in. */
    idle() {
      setRunning(false);
      setStatus('idle');
    },
  };
}
