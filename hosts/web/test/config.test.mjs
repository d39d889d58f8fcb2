// The session configuration the page builds, checked against the native host's defaults.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sessionConfig } from '../src/config.js';

test('defaults follow the spec and the native host (the shared defaults file)', () => {
  const config = sessionConfig();
  assert.equal(config.provider, 'anthropic');
  assert.equal(config.model, 'claude-sonnet-4-5');
  assert.equal(config.endpoint, 'anthropic');
  assert.equal(config.protocol, 'anthropic-messages');
  assert.deepEqual(config.limits, {
    maxTurns: 0,
    maxToolRoundsPerInput: 200,
    // 0: the provider family's own default (120 s for Anthropic, 10 s for the others).
    defaultCommandTimeoutMs: 0n,
    maxCommandTimeoutMs: 600_000n,
    enableLoopDetection: true,
    loopDetectionWindow: 10,
    maxSubagentDepth: 1,
    staleReadGuard: true,
    maxSessionTokens: 0n,
    maxCostCents: 0,
  });
  assert.equal(config.depth, 0);
  assert.equal(config.reasoningEffort, undefined);
  assert.deepEqual(config.hostTools, []);
});

test('options map to the WIT record: u64 as BigInt, tools with JSON schemas', () => {
  const config = sessionConfig({
    provider: 'openai',
    endpoint: 'local',
    protocol: 'chat-completions',
    limits: { maxTurns: 7, defaultCommandTimeoutMs: 5000 },
    contextWindowTokens: 200000,
    providerOptions: { temperature: 0 },
    retry: { maxRetries: 5, baseDelayMs: 250, maxDelayMs: 8000 },
    tools: [{ name: 'lookup', description: 'Looks up', parameters: { type: 'object', properties: { q: { type: 'string' } } }, call() {} }],
  });
  assert.equal(config.model, 'gpt-5');
  assert.equal(config.protocol, 'chat-completions');
  assert.equal(config.limits.maxTurns, 7);
  assert.equal(config.limits.defaultCommandTimeoutMs, 5000n);
  assert.equal(config.contextWindowTokens, 200000n);
  assert.equal(config.providerOptionsJson, '{"temperature":0}');
  assert.deepEqual(config.retry, { maxRetries: 5, baseDelayMs: 250n, maxDelayMs: 8000n });
  assert.equal(sessionConfig().retry, undefined, 'unset, the core keeps its defaults');
  assert.deepEqual(sessionConfig({ retry: { maxRetries: 0 } }).retry, { maxRetries: 0, baseDelayMs: 1000n, maxDelayMs: 60000n });
  assert.throws(() => sessionConfig({ retry: { maxDelayMs: '1s' } }), /retry.maxDelayMs: "1s" is not a whole number/);
  assert.deepEqual(config.hostTools, [
    { name: 'lookup', description: 'Looks up', parametersJson: '{"type":"object","properties":{"q":{"type":"string"}}}' },
  ]);
});

test('an unknown provider is refused with the known ones', () => {
  assert.throws(() => sessionConfig({ provider: 'mistral' }), /unknown provider "mistral": use one of anthropic, openai, gemini/);
});
