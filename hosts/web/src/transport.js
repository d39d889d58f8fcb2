// `llm-transport` over fetch(): the page holds each endpoint's base URL and key; the component
// only names an endpoint. Bodies stream chunk by chunk, and a session's interruption aborts
// whatever request it has in flight.

import defaults from '../gen/session-defaults.js';

/** Each provider's own API: base URL and protocol (core-component/protocol/data/defaults.json). */
export const PROVIDER_ENDPOINTS = Object.freeze(
  Object.fromEntries(defaults.providers.map((p) => [p.id, Object.freeze({ baseUrl: p.base_url, protocol: p.protocol })])),
);

const AUTH_BY_PROTOCOL = Object.fromEntries(defaults.protocols.map((p) => [p.id, p.auth]));

/**
 * The headers that authenticate a request to an endpoint. Anthropic refuses calls from a
 * browser unless they opt in with its direct-browser-access header.
 */
export function authHeaders(endpoint) {
  const headers = [];
  const protocol = endpoint.protocol ?? 'anthropic-messages';
  if (protocol === 'anthropic-messages') {
    headers.push(['anthropic-dangerous-direct-browser-access', 'true']);
  }
  if (!endpoint.apiKey) return headers;
  switch (endpoint.auth ?? AUTH_BY_PROTOCOL[protocol] ?? 'bearer') {
    case 'x-api-key':
      headers.push(['x-api-key', endpoint.apiKey]);
      break;
    case 'x-goog-api-key':
      headers.push(['x-goog-api-key', endpoint.apiKey]);
      break;
    default:
      headers.push(['authorization', `Bearer ${endpoint.apiKey}`]);
  }
  return headers;
}

/** The full URL of a path; a base ending in `/v1` is not doubled by a `/v1/...` path. */
export function endpointUrl(baseUrl, path) {
  const base = baseUrl.replace(/\/+$/, '');
  const rest = base.endsWith('/v1') && path.startsWith('/v1') ? path.slice(3) : path;
  return base + rest;
}

/** A transport failure as the component expects it: the WIT variant, thrown as a value. */
function transportError(tag, message) {
  return message === undefined ? { tag } : { tag, val: message };
}

/**
 * Builds the `agent:core/llm-transport` import.
 * @param {object} options
 * @param {Record<string, {baseUrl: string, apiKey?: string, protocol?: string, auth?: string, headers?: Record<string,string>}>} options.endpoints
 * @param {() => AbortSignal} options.signal the signal of the session's current input
 * @param {typeof fetch} [options.fetch]
 */
export function llmTransport({ endpoints, signal, fetch: fetchImpl = globalThis.fetch.bind(globalThis) }) {
  class HttpResponse {
    #status;
    #headers;
    #reader;
    #signal;

    constructor(response, abortSignal) {
      this.#status = response.status;
      this.#headers = [...response.headers].map(([k, v]) => [k.toLowerCase(), v]);
      this.#reader = response.body ? response.body.getReader() : null;
      this.#signal = abortSignal;
    }

    status() {
      return this.#status;
    }

    headers() {
      return this.#headers;
    }

    async nextChunk() {
      if (!this.#reader) return undefined;
      try {
        const { value, done } = await this.#reader.read();
        return done ? undefined : value;
      } catch (e) {
        if (this.#signal.aborted) throw transportError('cancelled');
        throw transportError('io', `the connection broke while reading the response: ${describe(e)}`);
      }
    }

    [Symbol.dispose]() {
      this.#reader?.cancel().catch(() => {});
    }
  }

  async function send(request) {
    const endpoint = endpoints[request.endpoint];
    if (!endpoint) {
      const known = Object.keys(endpoints).join(', ') || 'none';
      throw transportError(
        'unknown-endpoint',
        `no endpoint named "${request.endpoint}" is configured (configured: ${known})`,
      );
    }
    if (!endpoint.baseUrl) {
      throw transportError('not-configured', `endpoint "${request.endpoint}" has no base URL`);
    }
    const headers = new Headers();
    for (const [name, value] of request.headers) headers.set(name, value);
    for (const [name, value] of Object.entries(endpoint.headers ?? {})) headers.set(name, value);
    for (const [name, value] of authHeaders(endpoint)) headers.set(name, value);
    const sessionSignal = signal();
    // Only the wait for the response head is bounded: a long answer may stream for minutes.
    const head = new AbortController();
    const onAbort = () => head.abort();
    sessionSignal.addEventListener('abort', onAbort, { once: true });
    const timeoutMs = request.timeoutMs === undefined ? undefined : Number(request.timeoutMs);
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => head.abort('timeout'), timeoutMs);
    try {
      const response = await fetchImpl(endpointUrl(endpoint.baseUrl, request.path), {
        method: request.method,
        headers,
        body: request.body.length > 0 ? request.body : undefined,
        signal: head.signal,
      });
      // The session's signal stays wired to this request: it also aborts the body's reads.
      return new HttpResponse(response, head.signal);
    } catch (e) {
      sessionSignal.removeEventListener('abort', onAbort);
      if (sessionSignal.aborted) throw transportError('cancelled');
      if (head.signal.aborted) {
        throw transportError('timeout', `no response from "${request.endpoint}" within ${timeoutMs} ms`);
      }
      // fetch() hides the cause (CORS, DNS, refused) behind one TypeError on purpose.
      throw transportError(
        'connect',
        `could not reach ${endpointUrl(endpoint.baseUrl, request.path)}: ${describe(e)} ` +
          '(is the server up, and does it allow requests from this page (CORS)?)',
      );
    } finally {
      clearTimeout(timer);
    }
  }

  return { send, HttpResponse };
}

function describe(e) {
  return e instanceof Error ? e.message : String(e);
}
