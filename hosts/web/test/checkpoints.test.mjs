// Checkpoints of the in-memory workspace: recorded before each input, restored byte for
// byte, used up by a restore, and failures named rather than hidden.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Checkpoints } from '../src/checkpoints.js';
import { MemoryWorkspace } from '../src/workspace.js';

const BINARY = Uint8Array.from({ length: 256 }, (_, i) => i);

test('a restore puts back changed, deleted and created files, byte for byte', () => {
  const workspace = new MemoryWorkspace({ 'bin.dat': BINARY, 'crlf.txt': 'a\r\nb' });
  const checkpoints = new Checkpoints(workspace);
  checkpoints.record('first\nsecond line');
  workspace.writeFile('bin.dat', 'text now');
  workspace.deleteFile('crlf.txt');
  workspace.writeFile('new/file.txt', 'x');
  const result = checkpoints.restore(1);
  assert.deepEqual(result, { input: 1, restored: ['bin.dat', 'crlf.txt'], removed: ['new/file.txt'], failed: [] });
  assert.deepEqual(workspace.readFile('bin.dat'), BINARY);
  assert.equal(workspace.readText('crlf.txt'), 'a\r\nb');
  assert.deepEqual(checkpoints.list(), []);
  assert.match(checkpoints.takeNote(), /before input 1 \("bin.dat", "crlf.txt", "new\/file.txt"\)/);
  assert.equal(checkpoints.takeNote(), undefined);
});

test('undo steps back one input at a time and names what is left to restore', () => {
  const workspace = new MemoryWorkspace({ f: '0' });
  const checkpoints = new Checkpoints(workspace);
  for (const n of [1, 2, 3]) {
    checkpoints.record(`input ${n}`);
    workspace.writeFile('f', String(n));
  }
  assert.deepEqual(checkpoints.list().map((c) => [c.input, c.label, c.files]), [[1, 'input 1', 1], [2, 'input 2', 1], [3, 'input 3', 1]]);
  assert.equal(checkpoints.restore(undefined).input, 3);
  assert.equal(workspace.readText('f'), '2');
  assert.throws(() => checkpoints.restore(3), /no checkpoint before input 3; checkpoints exist before inputs 1, 2/);
  assert.equal(checkpoints.restore(1).input, 1);
  assert.equal(workspace.readText('f'), '0');
  assert.throws(() => checkpoints.restore(undefined), /none recorded, or all used by earlier undos/);
  checkpoints.record('input 4');
  assert.equal(checkpoints.list()[0].input, 4);
});

test('a folder standing where a recorded file was is reported, the rest restored', () => {
  const workspace = new MemoryWorkspace({ a: 'a', b: 'b' });
  const checkpoints = new Checkpoints(workspace);
  checkpoints.record('go');
  workspace.deleteFile('a');
  workspace.writeFile('a/inside.txt', 'x');
  workspace.writeFile('b', 'changed');
  const result = checkpoints.restore(1);
  assert.deepEqual(result.restored, ['b']);
  assert.equal(result.failed.length, 1);
  assert.equal(result.failed[0].path, 'a');
  assert.match(result.failed[0].reason, /directory/);
});
