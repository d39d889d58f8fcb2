// A session configuration in the component's terms, with the spec's defaults (section 2.2),
// the same values the native host uses.

/** The model used when none is given, per provider profile. */
export const DEFAULT_MODELS = Object.freeze({
  anthropic: 'claude-sonnet-4-5',
  openai: 'gpt-5',
  gemini: 'gemini-2.5-pro',
});

const PROTOCOL_OF = { anthropic: 'anthropic-messages', openai: 'openai-responses', gemini: 'gemini' };

export const DEFAULT_LIMITS = Object.freeze({
  maxTurns: 0,
  maxToolRoundsPerInput: 0,
  defaultCommandTimeoutMs: 10_000,
  maxCommandTimeoutMs: 600_000,
  enableLoopDetection: true,
  loopDetectionWindow: 10,
  maxSubagentDepth: 1,
});

const PROVIDERS = Object.keys(PROTOCOL_OF);

/**
 * Builds the WIT `session-config` record from friendly options (plain numbers, tools with
 * object schemas). Unknown providers are refused here with the list of known ones.
 */
export function sessionConfig(options = {}) {
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
    },
    toolOutputLimits: options.toolOutputLimits ?? [],
    enabledTools: options.enabledTools,
    disabledTools: options.disabledTools ?? [],
    hostTools: (options.tools ?? []).map((tool) => ({
      name: tool.name,
      description: tool.description ?? '',
      parametersJson: JSON.stringify(tool.parameters ?? { type: 'object', properties: {} }),
    })),
    userInstructions: options.userInstructions,
    providerOptionsJson: options.providerOptions ? JSON.stringify(options.providerOptions) : undefined,
    depth: options.depth ?? 0,
    sessionId: options.sessionId,
    contextWindowTokens: options.contextWindowTokens === undefined ? undefined : BigInt(options.contextWindowTokens),
    parallelToolCalls: options.parallelToolCalls,
    imageInput: options.imageInput,
    knowledgeCutoff: options.knowledgeCutoff,
  };
}
