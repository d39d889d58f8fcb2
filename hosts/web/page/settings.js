// The model settings form: endpoint presets, the API key and the model, remembered in
// localStorage only when the person ticks "Remember".

import { DEFAULT_MODELS, PROVIDER_ENDPOINTS } from '../src/index.js';

const STORAGE_KEY = 'agent-core-demo/settings';
const DEFAULT_MODEL_NAMES = new Set(Object.values(DEFAULT_MODELS));

/** What identifies a session's configuration: a change means a new session is needed. */
export function configKey(s) {
  return JSON.stringify([s.preset, s.provider, s.protocol, s.model]);
}

/**
 * Wires the settings form. `elements` holds its controls (`preset`, `baseUrl`, `apiKey`,
 * `remember`, `provider`, `protocol`, `model`, `summary`, `note`); `server` is the local test
 * server's URL from the page's query, if any; `isSessionStale(s)` says whether a live session
 * was opened with other settings than `s` (the note then says they apply from the next one).
 */
export function createSettings({ elements: ui, server, isSessionStale }) {
  const PRESETS = {
    local: { label: 'Local test server', provider: 'anthropic', protocol: 'anthropic-messages', baseUrl: server ?? '' },
    anthropic: { label: 'Anthropic', provider: 'anthropic', ...PROVIDER_ENDPOINTS.anthropic },
    openai: { label: 'OpenAI', provider: 'openai', ...PROVIDER_ENDPOINTS.openai },
    gemini: { label: 'Gemini', provider: 'gemini', ...PROVIDER_ENDPOINTS.gemini },
    custom: { label: 'Custom' },
  };

  /** Per preset: what the person typed (base URL, key), so switching back and forth keeps it. */
  const perPreset = Object.fromEntries(
    Object.entries(PRESETS).map(([name, preset]) => [name, { baseUrl: preset.baseUrl ?? '', apiKey: '' }]),
  );
  /** The endpoints the sessions use, updated live: a new key applies to the next request. */
  const endpoints = {};
  let currentPreset = 'local';

  function current() {
    const provider = ui.provider.value;
    return {
      preset: ui.preset.value,
      baseUrl: ui.baseUrl.value.trim(),
      apiKey: ui.apiKey.value.trim(),
      provider,
      protocol: ui.protocol.value,
      model: ui.model.value.trim() || DEFAULT_MODELS[provider],
    };
  }

  function applyPreset(name) {
    const preset = PRESETS[name] ?? PRESETS.custom;
    currentPreset = name;
    ui.preset.value = name;
    ui.baseUrl.value = perPreset[name]?.baseUrl ?? '';
    ui.apiKey.value = perPreset[name]?.apiKey ?? '';
    ui.baseUrl.placeholder = name === 'local' ? 'http://127.0.0.1:PORT (make web-serve prints it)' : 'https://…';
    if (preset.provider) setProvider(preset.provider);
    if (preset.protocol) ui.protocol.value = preset.protocol;
  }

  function setProvider(provider) {
    ui.provider.value = provider;
    const model = ui.model.value.trim();
    if (!model || DEFAULT_MODEL_NAMES.has(model)) ui.model.value = DEFAULT_MODELS[provider];
  }

  /** Copies the form into `endpoints` (and storage), so the next request uses it. */
  function sync() {
    const s = current();
    perPreset[s.preset] = { baseUrl: ui.baseUrl.value, apiKey: ui.apiKey.value };
    endpoints[s.preset] = { baseUrl: s.baseUrl, apiKey: s.apiKey || undefined, protocol: s.protocol };
    ui.summary.textContent = `${s.model} · ${label(s.preset)}`;
    ui.note.hidden = !isSessionStale(s);
    save();
  }

  function save() {
    try {
      if (!ui.remember.checked) {
        localStorage.removeItem(STORAGE_KEY);
        return;
      }
      const s = current();
      localStorage.setItem(
        STORAGE_KEY,
        JSON.stringify({ preset: s.preset, provider: s.provider, protocol: s.protocol, model: ui.model.value, endpoints: perPreset }),
      );
    } catch {
      // Storage may be unavailable (private mode, file://); remembering is best effort.
    }
  }

  function load() {
    let stored;
    try {
      stored = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null');
    } catch {
      stored = null;
    }
    if (stored && typeof stored === 'object') {
      ui.remember.checked = true;
      for (const [name, value] of Object.entries(stored.endpoints ?? {})) {
        if (perPreset[name] && value && typeof value === 'object') {
          perPreset[name] = { baseUrl: String(value.baseUrl ?? ''), apiKey: String(value.apiKey ?? '') };
        }
      }
      if (server) perPreset.local.baseUrl = server;
      const preset = server ? 'local' : PRESETS[stored.preset] ? stored.preset : 'anthropic';
      currentPreset = preset;
      applyPreset(preset);
      if (!server) {
        if (['anthropic', 'openai', 'gemini'].includes(stored.provider)) ui.provider.value = stored.provider;
        if ([...ui.protocol.options].some((o) => o.value === stored.protocol)) ui.protocol.value = stored.protocol;
        if (typeof stored.model === 'string' && stored.model) ui.model.value = stored.model;
      }
    } else {
      const preset = server ? 'local' : 'anthropic';
      currentPreset = preset;
      applyPreset(preset);
    }
  }

  /** The preset's name as shown to people. */
  function label(preset) {
    return PRESETS[preset]?.label ?? preset;
  }

  ui.preset.addEventListener('change', () => {
    perPreset[currentPreset] = { baseUrl: ui.baseUrl.value, apiKey: ui.apiKey.value };
    applyPreset(ui.preset.value);
    sync();
  });
  ui.provider.addEventListener('change', () => {
    setProvider(ui.provider.value);
    sync();
  });
  for (const input of [ui.baseUrl, ui.apiKey, ui.protocol, ui.model]) {
    input.addEventListener('input', sync);
    input.addEventListener('change', sync);
  }
  ui.remember.addEventListener('change', sync);

  return {
    endpoints,
    current,
    sync,
    load,
    label,
    /** Once a session uses the current settings, there is nothing pending to point out. */
    hideNote() {
      ui.note.hidden = true;
    },
  };
}
