// A session configuration in the component's terms. The defaults (models, limits, each
// provider's endpoint and protocol) come from the one file both hosts read,
// core-component/protocol/data/defaults.json, copied into gen/ by scripts/build-web.sh.

import defaults from '../gen/session-defaults.js';
import { definitionOf } from './host-tools.js';

const camel = (name) => name.replace(/_([a-z])/g, (_, c) => c.toUpperCase());

/** The model used when none is given, per provider profile. */
export const DEFAULT_MODELS = Object.freeze(Object.fromEntries(defaults.providers.map((p) => [p.id, p.default_model])));

const PROTOCOL_OF = Object.fromEntries(defaults.providers.map((p) => [p.id, p.protocol]));

/** The session limits; `defaultCommandTimeoutMs: 0` means the provider family's own default. */
export const DEFAULT_LIMITS = Object.freeze(
  Object.fromEntries(Object.entries(defaults.limits).map(([name, value]) => [camel(name), value ?? 0])),
);

const PROVIDERS = Object.keys(PROTOCOL_OF);

/** How failed LLM requests are retried when `retry` leaves a part out (as the native host). */
export const DEFAULT_RETRY = Object.freeze(
  Object.fromEntries(Object.entries(defaults.retry).map(([name, value]) => [camel(name), value])),
);

/** `retry` with the missing parts from the defaults; a part that is not a whole number is named. */
function retrySettings(retry) {
  const merged = { ...DEFAULT_RETRY, ...retry };
  for (const [name, value] of Object.entries(merged)) {
    if (!Number.isInteger(value) || value < 0) {
      throw new Error(`retry.${name}: ${JSON.stringify(value)} is not a whole number of 0 or more`);
    }
  }
  return {
    maxRetries: merged.maxRetries,
    baseDelayMs: BigInt(merged.baseDelayMs),
    maxDelayMs: BigInt(merged.maxDelayMs),
  };
}

/**
 * Builds the WIT `session-config` record from friendly options (plain numbers, tools with
 * object schemas). Unknown providers are refused here with the list of known ones.
 */
export function sessionConfig(options = {}, hostTools = (options.tools ?? []).map(definitionOf)) {
  const provider = options.provider ?? 'anthropic';
  if (!PROVIDERS.includes(provider)) {
    throw new Error(`unknown provider "${provider}": use one of ${PROVIDERS.join(', ')}`);
  }
  const limits = { ...DEFAULT_LIMITS, ...(options.limits ?? {}) };
  return {
    provider,
    model: options.model ?? DEFAULT_MODELS[provider],
    endpoint: options.endpoint ?? provider,
    protocol: options.protocol ?? PROTOCOL_OF[provider],
    reasoningEffort: options.reasoningEffort,
    maxOutputTokens: options.maxOutputTokens,
    limits: {
      ...limits,
      defaultCommandTimeoutMs: BigInt(limits.defaultCommandTimeoutMs),
      maxCommandTimeoutMs: BigInt(limits.maxCommandTimeoutMs),
      maxSessionTokens: BigInt(limits.maxSessionTokens),
    },
    toolOutputLimits: options.toolOutputLimits ?? [],
    enabledTools: options.enabledTools,
    disabledTools: options.disabledTools ?? [],
    hostTools,
    userInstructions: options.userInstructions,
    providerOptionsJson: options.providerOptions ? JSON.stringify(options.providerOptions) : undefined,
    outputSchemaJson: options.outputSchema ? JSON.stringify(options.outputSchema) : undefined,
    depth: options.depth ?? 0,
    sessionId: options.sessionId,
    contextWindowTokens: options.contextWindowTokens === undefined ? undefined : BigInt(options.contextWindowTokens),
    parallelToolCalls: options.parallelToolCalls,
    imageInput: options.imageInput,
    knowledgeCutoff: options.knowledgeCutoff,
    retry: options.retry && retrySettings(options.retry),
    systemReminders: options.systemReminders,
  };
}
