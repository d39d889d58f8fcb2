// The execution environment over a MemoryWorkspace, as the component sees it through jco:
// BigInt u64s, thrown `{tag, val}` variants, and the native local environment's semantics.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryWorkspace } from '../src/workspace.js';
import { Process, executionEnvironment } from '../src/environment.js';

const text = (bytes) => new TextDecoder().decode(bytes);

/** A workspace whose clock the test moves by hand. */
function workspaceAt(files, start = Date.UTC(2024, 0, 1)) {
  const clock = { now: start };
  const ws = new MemoryWorkspace(files, { now: () => clock.now });
  return { ws, clock };
}

/** The variant `action` throws, checked to be a plain `{tag, val}` object as jco needs. */
function thrown(action) {
  try {
    action();
  } catch (error) {
    assert.ok(!(error instanceof Error), `an Error would trap the component: ${error?.stack}`);
    assert.deepEqual(Object.keys(error).sort(), ['tag', 'val']);
    assert.equal(typeof error.val, 'string');
    return error;
  }
  assert.fail('expected the call to fail');
}

/** A grep request with the defaults the core sends. */
function grepOptions(pattern, overrides = {}) {
  return {
    pattern,
    path: undefined,
    globFilter: undefined,
    caseInsensitive: false,
    fixedStrings: false,
    maxResults: 0,
    outputMode: 'content',
    ...overrides,
  };
}

const hits = (matches) => matches.map((m) => `${m.path}:${m.lineNumber}:${m.line}`);

test('readFile returns bytes, whole or a BigInt range, and fails with a tag naming the path', () => {
  const env = executionEnvironment(new MemoryWorkspace({ 'a/b/c.txt': '0123456789' }));
  const whole = env.readFile('a/b/c.txt', undefined);
  assert.ok(whole instanceof Uint8Array);
  assert.equal(text(whole), '0123456789');
  assert.equal(text(env.readFile('a/b/c.txt', { offset: 2n, length: 3n })), '234');
  assert.equal(text(env.readFile('a/b/c.txt', { offset: 8n, length: 100n })), '89');
  assert.equal(env.readFile('a/b/c.txt', { offset: 50n, length: 1n }).length, 0);

  assert.deepEqual(thrown(() => env.readFile('notes.txt', undefined)), { tag: 'not-found', val: 'notes.txt does not exist' });
  assert.deepEqual(thrown(() => env.readFile('a/b', undefined)), { tag: 'is-directory', val: 'a/b is a directory, not a file' });
  const tooLarge = thrown(() => env.readFile('a/b/c.txt', { offset: 0n, length: 1n << 40n }));
  assert.equal(tooLarge.tag, 'too-large');
  assert.match(tooLarge.val, /^a\/b\/c\.txt is 10 bytes; read at most 268435456 bytes/);
});

test('write, create-directory, exists, rename and delete work on the workspace, with native errors', () => {
  const ws = new MemoryWorkspace({ 'keep.txt': 'k' });
  const env = executionEnvironment(ws);
  env.writeFile('src/new/file.rs', new TextEncoder().encode('fn x() {}'));
  assert.equal(ws.readText('src/new/file.rs'), 'fn x() {}');
  env.createDirectory('docs/api');
  env.createDirectory('docs/api');
  assert.equal(env.fileExists('docs/api'), true);
  env.renameFile('src/new/file.rs', 'lib/file.rs');
  assert.equal(env.fileExists('src/new/file.rs'), false);
  assert.equal(ws.readText('lib/file.rs'), 'fn x() {}');
  env.deleteFile('lib/file.rs');
  assert.equal(env.fileExists('lib/file.rs'), false);

  assert.deepEqual(thrown(() => env.deleteFile('docs')), {
    tag: 'is-directory',
    val: 'docs is a directory; delete-file removes files only',
  });
  assert.deepEqual(thrown(() => env.deleteFile('nope.txt')), { tag: 'not-found', val: 'nope.txt does not exist' });
  assert.deepEqual(thrown(() => env.writeFile('docs', new Uint8Array())), { tag: 'is-directory', val: 'docs is a directory' });
  assert.deepEqual(thrown(() => env.createDirectory('keep.txt')), { tag: 'already-exists', val: 'keep.txt already exists' });
  assert.deepEqual(thrown(() => env.writeFile('keep.txt/x', new Uint8Array())), {
    tag: 'not-a-directory',
    val: 'a parent of keep.txt/x is not a directory',
  });
  assert.deepEqual(thrown(() => env.renameFile('ghost.txt', 'b.txt')), { tag: 'not-found', val: 'ghost.txt does not exist' });
  assert.deepEqual(thrown(() => env.readFile('', undefined)), { tag: 'invalid-input', val: 'the path is empty' });
  assert.equal(thrown(() => env.readFile('a\0b', undefined)).tag, 'invalid-input');
});

test('stat returns BigInt size and modification time', () => {
  const { ws, clock } = workspaceAt({});
  clock.now = 1_700_000_000_123;
  ws.writeFile('f.txt', 'héllo');
  const env = executionEnvironment(ws);
  assert.deepEqual(env.stat('f.txt'), { kind: 'file', size: 6n, modifiedMs: 1_700_000_000_123n, readonly: false });
  const dir = env.stat('.');
  assert.equal(dir.kind, 'directory');
  assert.equal(dir.size, 0n);
  assert.equal(typeof dir.modifiedMs, 'bigint');
  assert.deepEqual(thrown(() => env.stat('f.txt/x')), { tag: 'not-a-directory', val: 'a parent of f.txt/x is not a directory' });
});

test('paths that leave the workspace are denied for every operation, naming the path', () => {
  const ws = new MemoryWorkspace({ 'src/lib.rs': '// needle\n', 'a.txt': 'A' });
  const env = executionEnvironment(ws);
  const climbing = ['../outside/secret.txt', 'src/../../outside/secret.txt', '../workspace/a.txt'];
  for (const path of climbing) {
    const error = thrown(() => env.readFile(path, undefined));
    assert.equal(error.tag, 'denied');
    assert.ok(error.val.startsWith(`${path} leads outside the workspace`), error.val);
    assert.ok(error.val.endsWith('this environment may only use /workspace'), error.val);
    assert.equal(env.fileExists(path), false);
  }
  const absolute = thrown(() => env.readFile('/etc/passwd', undefined));
  assert.deepEqual(absolute, {
    tag: 'denied',
    val: '/etc/passwd is outside the workspace; this environment may only use /workspace',
  });
  assert.equal(thrown(() => env.readFile('/workspace-other/a.txt', undefined)).tag, 'denied');
  assert.equal(text(env.readFile('/workspace/a.txt', undefined)), 'A', 'an absolute path inside is fine');
  assert.equal(text(env.readFile('src/../a.txt', undefined)), 'A', 'a .. that stays inside is fine');

  const denied = [
    () => env.writeFile('../planted.txt', new Uint8Array([1])),
    () => env.deleteFile('../x'),
    () => env.renameFile('a.txt', '../stolen.txt'),
    () => env.renameFile('../x', 'a.txt'),
    () => env.createDirectory('../newdir'),
    () => env.stat('..'),
    () => env.listDirectory('..', 1),
    () => env.grep(grepOptions('needle', { path: '..' })),
    () => env.glob('**/*', '../outside'),
  ];
  for (const action of denied) assert.equal(thrown(action).tag, 'denied');
  assert.equal(ws.exists('/planted.txt'), false);
  assert.equal(ws.readText('a.txt'), 'A');
});

test('listDirectory goes down to depth in sorted depth-first order, skips .git and ignored paths, keeps dot files', () => {
  const env = executionEnvironment(
    new MemoryWorkspace({
      'a/x.txt': 'xx',
      'a/deep/y.txt': 'y',
      'a-b.txt': 'ab',
      'B.md': 'b',
      '.env': 'SECRET=1',
      '.git/HEAD': 'ref',
      '.ignore': 'notes.txt\nbuild/\nlogs/**\n',
      'logs/today.log': 'ignored, but not the directory itself',
      'notes.txt': 'ignored',
      'build/out.js': 'ignored',
    }),
  );
  const one = env.listDirectory('.', 1);
  assert.deepEqual(
    one.map((e) => e.path),
    ['.env', '.ignore', 'B.md', 'a', 'a-b.txt', 'logs'],
  );
  assert.deepEqual(
    env.listDirectory('.', 2).map((e) => [e.path, e.kind, e.size, e.depth]),
    [
      ['.env', 'file', 8n, 1],
      ['.ignore', 'file', 25n, 1],
      ['B.md', 'file', 1n, 1],
      ['a', 'directory', 0n, 1],
      ['a/deep', 'directory', 0n, 2],
      ['a/x.txt', 'file', 2n, 2],
      ['a-b.txt', 'file', 2n, 1],
      ['logs', 'directory', 0n, 1],
    ],
  );
  assert.deepEqual(
    env.listDirectory('a', 5).map((e) => e.path),
    ['deep', 'deep/y.txt', 'x.txt'],
  );
  assert.deepEqual(env.listDirectory('.', 0), one, 'depth 0 lists like depth 1');
  assert.deepEqual(thrown(() => env.listDirectory('B.md', 1)), { tag: 'not-a-directory', val: 'B.md is not a directory' });
  assert.deepEqual(thrown(() => env.listDirectory('nope', 1)), { tag: 'not-found', val: 'nope does not exist' });
});

test('.gitignore applies only inside a git repository, with negation and directory-only rules', () => {
  const files = {
    '.gitignore': '# build output\n*.log\n!keep.log\ntarget/\n/root-only.txt\n',
    'a.log': 'x',
    'keep.log': 'x',
    'sub/b.log': 'x',
    'sub/root-only.txt': 'x',
    'root-only.txt': 'x',
    'target/debug/app': 'x',
    'src/target': 'a file named target',
  };
  const plain = executionEnvironment(new MemoryWorkspace(files));
  assert.equal(plain.listDirectory('.', 9).length, 12, 'without .git every entry shows');

  const repo = executionEnvironment(new MemoryWorkspace({ ...files, '.git/HEAD': 'ref' }));
  assert.deepEqual(
    repo.listDirectory('.', 9).map((e) => e.path),
    ['.gitignore', 'keep.log', 'src', 'src/target', 'sub', 'sub/root-only.txt'],
  );
});

test('grep content mode: sorted by path, 1-based lines, terminators trimmed, hidden and binary files skipped', () => {
  const env = executionEnvironment(
    new MemoryWorkspace({
      'src/main.rs': 'fn main() {\r\n    println!("Hello");\r\n}\r\n',
      'src/lib.rs': 'pub fn hello() {}\n',
      'data.bin': new Uint8Array([104, 101, 108, 108, 111, 0, 1, 2]),
      '.hidden/secret.txt': 'hello',
      'notes.txt': 'HELLO world\nhello again',
    }),
  );
  assert.deepEqual(hits(env.grep(grepOptions('hel+o'))), ['notes.txt:2:hello again', 'src/lib.rs:1:pub fn hello() {}']);
  assert.deepEqual(hits(env.grep(grepOptions('hel+o', { caseInsensitive: true }))), [
    'notes.txt:1:HELLO world',
    'notes.txt:2:hello again',
    'src/lib.rs:1:pub fn hello() {}',
    'src/main.rs:2:    println!("Hello");',
  ]);
  assert.deepEqual(hits(env.grep(grepOptions('hello', { path: '.hidden/secret.txt' }))), ['.hidden/secret.txt:1:hello']);
  assert.deepEqual(hits(env.grep(grepOptions('fn', { path: 'src' }))), ['src/lib.rs:1:pub fn hello() {}', 'src/main.rs:1:fn main() {']);
  // As in Rust, `.` matches the `\r` a CRLF line keeps while it is matched.
  assert.deepEqual(hits(env.grep(grepOptions('main\\(\\) \\{.$'))), ['src/main.rs:1:fn main() {']);
});

test('grep files-with-matches and count modes', () => {
  const env = executionEnvironment(
    new MemoryWorkspace({ 'a.txt': 'todo one\nnothing\nTODO two\ntodo three\n', 'b.txt': 'none\n', 'c/d.txt': 'todo\n' }),
  );
  assert.deepEqual(env.grep(grepOptions('todo', { outputMode: 'files-with-matches' })), [
    { path: 'a.txt', lineNumber: 0, line: '' },
    { path: 'c/d.txt', lineNumber: 0, line: '' },
  ]);
  assert.deepEqual(env.grep(grepOptions('todo', { outputMode: 'count', caseInsensitive: true })), [
    { path: 'a.txt', lineNumber: 3, line: '' },
    { path: 'c/d.txt', lineNumber: 1, line: '' },
  ]);
});

test('grep glob filters match the file name, or the path with * crossing /', () => {
  const env = executionEnvironment(
    new MemoryWorkspace({ 'main.rs': 'x', 'src/a.rs': 'x', 'src/ui/b.ts': 'x', 'src/ui/c.tsx': 'x', 'tests/t.ts': 'x' }),
  );
  const files = (globFilter) => env.grep(grepOptions('x', { globFilter, outputMode: 'files-with-matches' })).map((m) => m.path);
  assert.deepEqual(files('*.rs'), ['main.rs', 'src/a.rs']);
  assert.deepEqual(files('main.rs'), ['main.rs']);
  assert.deepEqual(files('b.ts'), ['src/ui/b.ts'], 'a bare name matches the file name at any depth');
  assert.deepEqual(files('src/**/*.ts'), ['src/ui/b.ts']);
  assert.deepEqual(files('*.{ts,tsx}'), ['src/ui/b.ts', 'src/ui/c.tsx', 'tests/t.ts']);
  assert.deepEqual(files('src/*.ts'), ['src/ui/b.ts'], 'as in globset without literal_separator, * crosses /');
  assert.deepEqual(thrown(() => files('*.{ts')), {
    tag: 'invalid-input',
    val: "invalid glob \"*.{ts\": error parsing glob '*.{ts': unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)",
  });
});

test('grep fixed strings, invalid patterns, limits and Rust regex syntax', () => {
  const many = Array.from({ length: 1200 }, (_, i) => `line ${i}`).join('\n');
  const env = executionEnvironment(
    new MemoryWorkspace({
      'code.js': 'call(a.b)\ncallxa-b)\nuse std;\nlet café = 1;\n',
      'lib.rs': 'use a;\nfn x() {}\nuse b;\n',
      'many.txt': many,
    }),
  );
  assert.deepEqual(hits(env.grep(grepOptions('call(a.b)', { fixedStrings: true }))), ['code.js:1:call(a.b)']);
  assert.deepEqual(hits(env.grep(grepOptions('(a.', { fixedStrings: true }))), ['code.js:1:call(a.b)']);

  const invalid = thrown(() => env.grep(grepOptions('(unclosed')));
  assert.equal(invalid.tag, 'invalid-input');
  assert.ok(invalid.val.startsWith('invalid pattern "(unclosed": '), invalid.val);
  assert.equal(thrown(() => env.grep(grepOptions('(?=x)'))).tag, 'invalid-input', 'Rust has no look-around');

  assert.equal(env.grep(grepOptions('line', { path: 'many.txt' })).length, 1000, 'the native default limit');
  assert.equal(env.grep(grepOptions('line', { maxResults: 5 })).length, 5);

  // Anchors apply per line; \w is Unicode as in Rust; (?P<name>) and \< \> are Rust syntax.
  assert.deepEqual(hits(env.grep(grepOptions('^use', { path: 'lib.rs' }))), ['lib.rs:1:use a;', 'lib.rs:3:use b;']);
  assert.deepEqual(hits(env.grep(grepOptions('caf\\w\\b'))), ['code.js:4:let café = 1;']);
  assert.deepEqual(hits(env.grep(grepOptions('(?P<kw>\\<fn\\>)'))), ['lib.rs:2:fn x() {}']);
  assert.deepEqual(hits(env.grep(grepOptions('(?i)USE B'))), ['lib.rs:3:use b;']);
});

test('grep gives up on a file at a matching line that is not UTF-8, as the native UTF-8 sink does', () => {
  const latin1 = (s) => Uint8Array.from(s, (c) => c.charCodeAt(0));
  const env = executionEnvironment(
    new MemoryWorkspace({ 'a.txt': latin1('needle one\ncaf\xe9 needle\nneedle three\n'), 'b.txt': latin1('caf\xe9\nneedle\n') }),
  );
  assert.deepEqual(hits(env.grep(grepOptions('needle'))), ['a.txt:1:needle one', 'b.txt:2:needle']);
});

test('grep skips files with a NUL in their first 64 KiB, and ignored ones', () => {
  const late = new TextEncoder().encode(`${'needle early\n'}${'x'.repeat(70_000)}\n`);
  const withLateNul = new Uint8Array(late.length + 20);
  withLateNul.set(late);
  withLateNul.set(new TextEncoder().encode('needle late\n'), late.length + 1); // after a NUL at late.length
  const env = executionEnvironment(
    new MemoryWorkspace({
      'early.bin': new Uint8Array([...new TextEncoder().encode('needle\n'), 0]),
      'mid.bin': new Uint8Array([...new TextEncoder().encode(`needle\n${'x'.repeat(20_000)}\n`), 0]),
      'late.dat': withLateNul,
      'plain.txt': 'needle\n',
      '.ignore': 'skipped.txt\n',
      'skipped.txt': 'needle\n',
    }),
  );
  assert.deepEqual(hits(env.grep(grepOptions('needle'))), ['late.dat:1:needle early', 'plain.txt:1:needle']);
});

test('glob lists files newest first, then by path, relative to the working directory', () => {
  const { ws, clock } = workspaceAt({});
  ws.writeFile('src/old.rs', 'o');
  ws.writeFile('src/b.rs', 'b');
  ws.writeFile('src/a.rs', 'a');
  ws.writeFile('.hidden/h.rs', 'h');
  clock.now += 1_000;
  ws.writeFile('src/deep/new.rs', 'n');
  clock.now += 1_000;
  ws.writeFile('notes.md', 'm');
  const env = executionEnvironment(ws);
  assert.deepEqual(env.glob('**/*.rs', undefined), ['src/deep/new.rs', 'src/a.rs', 'src/b.rs', 'src/old.rs']);
  assert.deepEqual(env.glob('*.rs', undefined), ['src/deep/new.rs', 'src/a.rs', 'src/b.rs', 'src/old.rs'], '* crosses /');
  assert.deepEqual(env.glob('*.rs', 'src/deep'), ['src/deep/new.rs']);
  assert.deepEqual(env.glob('deep/*', 'src'), ['src/deep/new.rs'], 'the pattern is relative to the path');
  assert.deepEqual(env.glob('*', undefined)[0], 'notes.md');
  assert.deepEqual(env.glob('*.none', undefined), []);
  assert.deepEqual(thrown(() => env.glob('*.rs', 'missing')), { tag: 'not-found', val: 'missing does not exist' });
  assert.equal(thrown(() => env.glob('[a', undefined)).tag, 'invalid-input');
});

test('spawn is unsupported with a message that points to the file tools', () => {
  const env = executionEnvironment(new MemoryWorkspace());
  const error = thrown(() => env.spawn({ command: 'cargo test', workingDir: undefined, timeoutMs: 1000n, env: [] }));
  assert.equal(error.tag, 'unsupported');
  assert.ok(error.val.includes('"cargo test"'), error.val);
  assert.match(error.val, /this is a browser: there is no process execution here \(no shell, no interpreters, no git\)/);
  assert.match(error.val, /read_file, write_file, edit_file, apply_patch, grep, glob, list_dir/);
  assert.equal(env.Process, Process);
  assert.throws(() => new Process(), /no process can exist here/);
});

test('platform, OS version and working directory', () => {
  const env = executionEnvironment(new MemoryWorkspace({}, { root: '/home/user/project' }));
  assert.equal(env.platform(), 'browser');
  assert.equal(env.workingDirectory(), '/home/user/project');
  const expected = globalThis.navigator?.userAgent || 'browser (in-memory workspace)';
  assert.equal(env.osVersion(), expected);
  assert.equal(executionEnvironment(new MemoryWorkspace(), { osVersion: 'Test OS' }).osVersion(), 'Test OS');
});

test('a cwd scopes the environment to a subdirectory, as the native Scoped does', () => {
  const ws = new MemoryWorkspace({ 'pkg/src/a.rs': 'needle\n', 'pkg/README.md': 'needle\n', 'other/secret.txt': 'needle\n' });
  const env = executionEnvironment(ws, { cwd: 'pkg' });
  assert.equal(env.workingDirectory(), '/workspace/pkg');
  assert.equal(text(env.readFile('src/a.rs', undefined)), 'needle\n');
  env.writeFile('new.txt', new TextEncoder().encode('n'));
  assert.equal(ws.readText('pkg/new.txt'), 'n');
  assert.deepEqual(hits(env.grep(grepOptions('needle'))), ['README.md:1:needle', 'src/a.rs:1:needle']);
  assert.deepEqual(env.glob('*.rs', undefined), ['src/a.rs']);
  assert.deepEqual(
    env.listDirectory('.', 1).map((e) => e.path),
    ['README.md', 'new.txt', 'src'],
  );
  assert.deepEqual(thrown(() => env.readFile('../other/secret.txt', undefined)), {
    tag: 'denied',
    val: 'pkg/../other/secret.txt: /workspace/other/secret.txt is outside the allowed directories (/workspace/pkg)',
  });
  assert.equal(thrown(() => env.readFile('/workspace/other/secret.txt', undefined)).tag, 'denied');
  assert.deepEqual(thrown(() => env.readFile('gone.txt', undefined)), { tag: 'not-found', val: 'pkg/gone.txt does not exist' });
  assert.throws(() => executionEnvironment(ws, { cwd: 'missing' }), /missing does not exist/);
});
