// `make web-serve`: serves the page (target/web) on http://127.0.0.1:8080 (PORT to change) with
// a scripted LLM server beside it for the page's "Local test server" preset, and prints the URL
// to open. Stops both on Ctrl-C.

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic } from './static-server.mjs';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const script = process.env.SCRIPT ?? join(repo, 'examples', 'demo-script.json');
const scripted = spawn(join(repo, 'target', 'debug', 'scripted-llm-server'), ['--script', script], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const llmUrl = await new Promise((resolve, reject) => {
  createInterface({ input: scripted.stdout }).once('line', resolve);
  scripted.once('exit', (code) => reject(new Error(`the scripted LLM server exited (${code})`)));
});
const site = await serveStatic(join(repo, 'target', 'web'), { port: Number(process.env.PORT ?? 8080) });
console.log(`page:                 ${site.url}?server=${encodeURIComponent(llmUrl)}`);
console.log(`scripted LLM server:  ${llmUrl} (replies from ${script}; it has one reply per request)`);
console.log('Pick another endpoint on the page to use a real model with your key. Ctrl-C stops.');

const stop = async () => {
  scripted.kill('SIGTERM');
  await site.close();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
