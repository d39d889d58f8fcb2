// The in-memory workspace: seeding, round-trips through objects and zips, the file
// operations and their errors, and change notifications.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { unzipSync, zipSync } from 'fflate';
import { MemoryWorkspace, WorkspaceError, comparePaths } from '../src/workspace.js';

/** Every byte value, so a round-trip that decodes or re-encodes anything shows. */
const BINARY = Uint8Array.from({ length: 256 }, (_, i) => i);

/** A clock that advances one millisecond per reading, from a fixed 2024 start. */
function steppingClock(start = Date.UTC(2024, 0, 1)) {
  let now = start;
  return () => now++;
}

/** The WorkspaceError `action` throws. */
function failure(action) {
  try {
    action();
  } catch (error) {
    assert.ok(error instanceof WorkspaceError, `expected a WorkspaceError, got ${error}`);
    return error;
  }
  assert.fail('expected the operation to fail');
}

test('seeding from an object makes text files, binary files and empty directories', () => {
  const ws = new MemoryWorkspace({ 'src/a.txt': 'alpha\n', 'bin/blob': BINARY, 'empty-dir/': null });
  assert.equal(ws.root, '/workspace');
  assert.equal(ws.readText('src/a.txt'), 'alpha\n');
  assert.deepEqual(ws.readFile('bin/blob'), BINARY);
  assert.deepEqual(
    ws.entries().map((e) => [e.path, e.kind, e.size]),
    [
      ['bin', 'directory', 0],
      ['bin/blob', 'file', 256],
      ['empty-dir', 'directory', 0],
      ['src', 'directory', 0],
      ['src/a.txt', 'file', 6],
    ],
  );
  assert.deepEqual(
    ws.files().map((e) => e.path),
    ['bin/blob', 'src/a.txt'],
  );
});

test('a directory key with contents is refused', () => {
  const error = failure(() => new MemoryWorkspace({ 'dir/': 'text' }));
  assert.equal(error.code, 'invalid-input');
  assert.match(error.message, /dir\//);
});

test('toObject gives text as strings, binary as bytes and empty directories as null, and round-trips', () => {
  const seed = {
    'README.md': '# title\n',
    'bom.txt': '\uFEFFwith a byte-order mark',
    'nul.txt': new Uint8Array([104, 105, 0]),
    'latin1.txt': new Uint8Array([0xe9, 0x74, 0xe9]),
    'bin/blob': BINARY,
    'docs/empty/': null,
  };
  const ws = new MemoryWorkspace(seed);
  const object = ws.toObject();
  assert.deepEqual(Object.keys(object).sort(), ['README.md', 'bin/blob', 'bom.txt', 'docs/empty/', 'latin1.txt', 'nul.txt']);
  assert.equal(object['README.md'], '# title\n');
  assert.equal(object['bom.txt'], '\uFEFFwith a byte-order mark');
  assert.ok(object['nul.txt'] instanceof Uint8Array, 'a file with NUL is not text');
  assert.ok(object['latin1.txt'] instanceof Uint8Array, 'invalid UTF-8 is not text');
  assert.deepEqual(object['bin/blob'], BINARY);
  assert.equal(object['docs/empty/'], null);

  const again = MemoryWorkspace.fromObject(object);
  assert.deepEqual(again.toObject(), object);
  assert.deepEqual(again.readFile('bom.txt'), ws.readFile('bom.txt'), 'the BOM survives byte for byte');
});

test('a zip round-trip keeps every file byte for byte and empty directories', () => {
  const ws = new MemoryWorkspace({ 'src/main.rs': 'fn main() {}\n', 'bin/blob': BINARY, 'empty/': null }, { now: steppingClock() });
  const zip = ws.toZip();
  const names = Object.keys(unzipSync(zip)).sort();
  assert.deepEqual(names, ['bin/blob', 'empty/', 'src/main.rs']);

  const back = MemoryWorkspace.fromZip(zip);
  assert.deepEqual(back.readFile('bin/blob'), BINARY);
  assert.equal(back.readText('src/main.rs'), 'fn main() {}\n');
  assert.equal(back.stat('empty').kind, 'directory');
  assert.deepEqual(back.toObject(), ws.toObject());
});

test('fromZip reads a zip made elsewhere, with explicit directory entries, under a custom root', () => {
  const zip = zipSync({ 'proj/': new Uint8Array(0), 'proj/a.txt': new TextEncoder().encode('A'), 'proj/sub/': new Uint8Array(0) });
  const ws = MemoryWorkspace.fromZip(zip, { root: '/home/me' });
  assert.equal(ws.root, '/home/me');
  assert.equal(ws.readText('proj/a.txt'), 'A');
  assert.equal(ws.readText('/home/me/proj/a.txt'), 'A');
  assert.equal(ws.stat('proj/sub').kind, 'directory');
});

test('fromZip refuses bytes that are not a zip, and entries that climb out of the root', () => {
  assert.equal(failure(() => MemoryWorkspace.fromZip(new Uint8Array([1, 2, 3, 4]))).code, 'invalid-input');
  const evil = zipSync({ '../evil.txt': new Uint8Array([1]) });
  const error = failure(() => MemoryWorkspace.fromZip(evil));
  assert.equal(error.code, 'denied');
  assert.match(error.message, /\.\.\/evil\.txt/);
});

test('writing a nested file creates its parents', () => {
  const ws = new MemoryWorkspace();
  ws.writeFile('a/b/c/d.txt', 'deep');
  assert.equal(ws.stat('a').kind, 'directory');
  assert.equal(ws.stat('a/b/c').kind, 'directory');
  assert.equal(ws.readText('a/b/c/d.txt'), 'deep');
  ws.writeFile('a/b/c/d.txt', new Uint8Array([1, 2]));
  assert.deepEqual(ws.readFile('a/b/c/d.txt'), new Uint8Array([1, 2]), 'a write replaces the contents');
});

test('reads and writes copy, so callers cannot change a file behind its back', () => {
  const ws = new MemoryWorkspace();
  const data = new Uint8Array([1, 2, 3]);
  ws.writeFile('f', data);
  data[0] = 9;
  const read = ws.readFile('f');
  read[1] = 9;
  assert.deepEqual(ws.readFile('f'), new Uint8Array([1, 2, 3]));
});

test('paths resolve against the root, folding . and ..; escaping paths resolve but operations refuse them', () => {
  const ws = new MemoryWorkspace({ 'src/a.txt': 'A' });
  assert.equal(ws.resolve('src/./x/../a.txt'), '/workspace/src/a.txt');
  assert.equal(ws.resolve('.'), '/workspace');
  assert.equal(ws.resolve('/workspace//src/'), '/workspace/src');
  assert.equal(ws.resolve('../etc/passwd'), '/etc/passwd');
  assert.equal(ws.readText('/workspace/src/../src/a.txt'), 'A');

  for (const path of ['../etc/passwd', '/etc/passwd', '/workspace-other/x']) {
    const error = failure(() => ws.readFile(path));
    assert.equal(error.code, 'denied');
    assert.ok(error.message.includes(path), error.message);
    assert.equal(ws.exists(path), false);
  }
  assert.equal(failure(() => ws.writeFile('../planted.txt', 'x')).code, 'denied');
});

test('failures carry the right code and name the path', () => {
  const ws = new MemoryWorkspace({ 'notes.txt': 'n', 'dir/x.txt': 'x' });
  const cases = [
    [() => ws.readFile('missing.txt'), 'not-found', 'missing.txt does not exist'],
    [() => ws.readText('dir'), 'is-directory', 'dir is a directory, not a file'],
    [() => ws.stat('notes.txt/inner'), 'not-a-directory', 'a parent of notes.txt/inner is not a directory'],
    [() => ws.writeFile('dir', 'x'), 'is-directory', 'dir is a directory'],
    [() => ws.writeFile('notes.txt/child.txt', 'x'), 'not-a-directory', 'a parent of notes.txt/child.txt is not a directory'],
    [() => ws.mkdir('notes.txt'), 'already-exists', 'notes.txt already exists'],
    [() => ws.deleteFile('dir'), 'is-directory', 'dir is a directory'],
    [() => ws.deleteFile('gone.txt'), 'not-found', 'gone.txt does not exist'],
    [() => ws.renameFile('gone.txt', 'x.txt'), 'not-found', 'gone.txt does not exist'],
    [() => ws.renameFile('notes.txt', 'dir'), 'is-directory', 'dir is a directory'],
    [() => ws.renameFile('dir', 'dir/inside'), 'invalid-input', 'dir'],
    [() => ws.writeFile('bad.txt', 42), 'invalid-input', 'bad.txt'],
    [() => ws.readFile('a\0b'), 'invalid-input', 'NUL'],
  ];
  for (const [action, code, text] of cases) {
    const error = failure(action);
    assert.equal(error.code, code, `${error.message}`);
    assert.ok(error.message.includes(text), `${JSON.stringify(error.message)} should include ${JSON.stringify(text)}`);
  }
  assert.equal(ws.readText('notes.txt'), 'n', 'failed operations change nothing');
  assert.equal(ws.exists('notes.txt/child.txt'), false);
});

test('rename moves files across directories and whole directories, replacing a destination file', () => {
  const ws = new MemoryWorkspace({ 'a/one.txt': '1', 'a/sub/two.txt': '2', 'b/old.txt': 'old', 'c.txt': 'c' });
  ws.renameFile('a/one.txt', 'x/y/one.txt');
  assert.equal(ws.exists('a/one.txt'), false);
  assert.equal(ws.readText('x/y/one.txt'), '1');

  ws.renameFile('c.txt', 'b/old.txt');
  assert.equal(ws.readText('b/old.txt'), 'c');
  assert.equal(ws.exists('c.txt'), false);

  ws.renameFile('a', 'moved/a');
  assert.equal(ws.readText('moved/a/sub/two.txt'), '2');
  assert.equal(ws.exists('a'), false);
  assert.deepEqual(
    ws.entries().map((e) => e.path),
    ['b', 'b/old.txt', 'moved', 'moved/a', 'moved/a/sub', 'moved/a/sub/two.txt', 'x', 'x/y', 'x/y/one.txt'],
  );
});

test('mkdir creates parents, succeeds when the directory exists, and delete removes only the file', () => {
  const ws = new MemoryWorkspace();
  ws.mkdir('p/q/r');
  ws.mkdir('p/q/r');
  assert.deepEqual(
    ws.entries().map((e) => e.path),
    ['p', 'p/q', 'p/q/r'],
  );
  ws.writeFile('p/q/r/f.txt', 'f');
  ws.deleteFile('p/q/r/f.txt');
  assert.equal(ws.exists('p/q/r/f.txt'), false);
  assert.equal(ws.exists('p/q/r'), true);
});

test('stat reports kind, size and the modification time from the clock', () => {
  let now = 1_000;
  const ws = new MemoryWorkspace({}, { now: () => now });
  now = 5_000;
  ws.writeFile('f.txt', 'héllo');
  assert.deepEqual(ws.stat('f.txt'), { kind: 'file', size: 6, modifiedMs: 5_000 });
  now = 7_000;
  ws.writeFile('f.txt', 'x');
  assert.deepEqual(ws.stat('f.txt'), { kind: 'file', size: 1, modifiedMs: 7_000 });
  assert.deepEqual(ws.stat('.'), { kind: 'directory', size: 0, modifiedMs: 7_000 });
});

test('entries sort segment by segment, so a directory precedes its contents', () => {
  const ws = new MemoryWorkspace({ 'a-b': '', 'a/x': '', 'a.txt': '', 'B': '', 'é': '', '😀': '', '\uFF5E': '' });
  assert.deepEqual(
    ws.entries().map((e) => e.path),
    // byte order of UTF-8: uppercase first; U+FF5E before U+1F600 although its UTF-16 unit is larger
    ['B', 'a', 'a/x', 'a-b', 'a.txt', 'é', '\uFF5E', '😀'],
  );
  assert.ok(comparePaths('a/x', 'a-b') < 0);
});

test('change listeners hear writes (with created parents), deletes, renames and mkdirs until unsubscribed', () => {
  const ws = new MemoryWorkspace({ 'keep.txt': 'k' });
  const changes = [];
  const unsubscribe = ws.onChange((change) => changes.push(change));
  ws.writeFile('src/lib/a.txt', 'a');
  ws.renameFile('src/lib/a.txt', 'out/b.txt');
  ws.mkdir('empty');
  ws.deleteFile('keep.txt');
  assert.deepEqual(changes, [
    { kind: 'mkdir', path: 'src' },
    { kind: 'mkdir', path: 'src/lib' },
    { kind: 'write', path: 'src/lib/a.txt' },
    { kind: 'mkdir', path: 'out' },
    { kind: 'rename', path: 'src/lib/a.txt', to: 'out/b.txt' },
    { kind: 'mkdir', path: 'empty' },
    { kind: 'delete', path: 'keep.txt' },
  ]);
  unsubscribe();
  ws.writeFile('later.txt', 'l');
  assert.equal(changes.length, 7);
});

test('a failing operation notifies nobody, and a throwing listener does not break the change', (t) => {
  const ws = new MemoryWorkspace({ 'f.txt': 'f' });
  const heard = [];
  ws.onChange(() => {
    throw new Error('listener bug');
  });
  ws.onChange((change) => heard.push(change.path));
  const logged = t.mock.method(console, 'error', () => {});
  failure(() => ws.writeFile('f.txt/child', 'x'));
  assert.deepEqual(heard, []);
  ws.writeFile('g.txt', 'g');
  assert.equal(ws.readText('g.txt'), 'g');
  assert.deepEqual(heard, ['g.txt']);
  if (typeof globalThis.reportError !== 'function') assert.equal(logged.mock.callCount(), 1);
});
