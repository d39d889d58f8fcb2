// The package's TypeScript declarations: a consumer written against the documented API
// type-checks (strict) with the TypeScript compiler.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { writeEventFixtures } from './types/check-event-fixtures.mjs';

const web = fileURLToPath(new URL('../', import.meta.url));
// Both checks compile the same project, which includes the generated fixtures.
const fixtureCount = writeEventFixtures();

test('a consumer of the package type-checks against src/index.d.ts and the generated types', { skip: !existsSync(`${web}gen/agent-core.d.ts`) && 'hosts/web/gen is not built (make web)' }, () => {
  const tsc = spawnSync(`${web}node_modules/.bin/tsc`, ['-p', 'test/types/tsconfig.json'], { cwd: web, encoding: 'utf8' });
  assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
});

test('every event fixture of the Rust protocol crate type-checks as an AgentEvent', { skip: !existsSync(`${web}gen/agent-core.d.ts`) && 'hosts/web/gen is not built (make web)' }, () => {
  assert.ok(fixtureCount >= 40, `only ${fixtureCount} fixtures`);
  const tsc = spawnSync(`${web}node_modules/.bin/tsc`, ['-p', 'test/types/tsconfig.json'], { cwd: web, encoding: 'utf8' });
  assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
});
