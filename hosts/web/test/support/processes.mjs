// The real parts the browser tests run against: the scripted LLM server (a Rust binary on
// 127.0.0.1 speaking Anthropic's wire format) and the native agent-host, for parity.

import { spawn } from 'node:child_process';
import { mkdtemp, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../../../../', import.meta.url));
export const TARGET = join(REPO, 'target');
const SERVER_BIN = join(TARGET, 'debug', 'scripted-llm-server');
const HOST_BIN = join(TARGET, 'debug', 'agent-host');

/** Starts the scripted server on a script; `stop()` returns the requests it received. */
export async function startScriptedServer(script) {
  const dir = await mkdtemp(join(tmpdir(), 'scripted-'));
  const scriptFile = join(dir, 'script.json');
  const requestsFile = join(dir, 'requests.json');
  await writeFile(scriptFile, JSON.stringify(script));
  const child = spawn(SERVER_BIN, ['--script', scriptFile, '--requests-out', requestsFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = await new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', resolve);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${SERVER_BIN} exited (${code}) before printing its URL`)));
  });
  return {
    url,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      const requests = JSON.parse(await readFile(requestsFile, 'utf8'));
      await rm(dir, { recursive: true, force: true });
      return requests;
    },
  };
}

/** Every file under `dir` as `{ relative/path: text }`. */
export async function readTree(dir) {
  const files = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = join(entry.parentPath ?? entry.path, entry.name);
    files[relative(dir, full)] = await readFile(full, 'utf8');
  }
  return files;
}

/**
 * Runs a scenario with the native host: `agent-host run --json` in a temporary folder seeded
 * with the scenario's files, against its own scripted server.
 * @returns {Promise<{ events: object[], files: Record<string,string>, requests: object[], cwd: string }>}
 */
export async function runNative(scenario) {
  const cwd = await mkdtemp(join(tmpdir(), 'native-run-'));
  for (const [path, text] of Object.entries(scenario.files ?? {})) {
    await mkdir(dirname(join(cwd, path)), { recursive: true });
    await writeFile(join(cwd, path), text);
  }
  const server = await startScriptedServer(scenario.script);
  try {
    const env = { ...process.env, ANTHROPIC_BASE_URL: server.url, AGENT_CORE_COMPONENT: join(TARGET, 'agent-core.wasm') };
    for (const name of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'GEMINI_API_KEY', 'GEMINI_BASE_URL']) delete env[name];
    const child = spawn(HOST_BIN, ['run', scenario.task, '--cwd', cwd, '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`agent-host run exited with ${code}:\n${stderr}`);
    const events = stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line));
    return { events, files: await readTree(cwd), requests: await server.stop(), cwd };
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}
