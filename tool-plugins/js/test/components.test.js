// Runs the built plugin components (target/plugins/*.wasm) under Node: each is transpiled with
// jco, instantiated with WASI from @bytecodealliance/preview2-shim (no preopened directories,
// as in the native host) and a fake `execution-environment` reading a temporary workspace,
// then its definitions() and execute() are called. A component that is not built is skipped:
// build it with scripts/build-js-plugin.sh or scripts/build-py-plugin.sh.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import { transpile } from '@bytecodealliance/jco';
import * as fakeEnv from './fake-env.js';

// componentize-py's CPython uses extended-const, on by default only from Node 22 (V8 11.4).
if (Number(process.versions.node.split('.')[0]) < 22) {
  v8.setFlagsFromString('--experimental-wasm-extended-const');
}

const plugins = join(dirname(fileURLToPath(import.meta.url)), '../../../target/plugins');
const scratch = mkdtempSync(join(tmpdir(), 'tool-plugin-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

// The WASI shim jco itself depends on.
const shimPath = createRequire(import.meta.resolve('@bytecodealliance/jco')).resolve(
  '@bytecodealliance/preview2-shim',
);
const shim = await import(pathToFileURL(shimPath).href);
shim.filesystem._setPreopens({});

const camel = (name) => name.replace(/-([a-z])/g, (_, c) => c.toUpperCase());

/** Transpiles and instantiates a component; returns its `agent:core/tool` export. */
async function load(wasmPath) {
  const name = wasmPath.split('/').pop().replace(/\.wasm$/, '');
  const { files, imports } = await transpile(readFileSync(wasmPath), {
    name,
    instantiation: 'async',
    noTypescript: true,
    quiet: true,
  });
  const dir = join(scratch, name);
  for (const [file, bytes] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), bytes);
  }
  const importObject = {};
  for (const specifier of imports) {
    const [, pkg, iface] = /^wasi:([a-z-]+)\/([a-z-]+)/.exec(specifier) || [];
    if (pkg) importObject[specifier] = shim[pkg][camel(iface)];
    else if (specifier.startsWith('agent:core/execution-environment')) importObject[specifier] = fakeEnv;
    else if (specifier.startsWith('agent:core/types')) importObject[specifier] = {};
    else throw new Error(`unexpected import ${specifier}`);
  }
  const module = await import(pathToFileURL(join(dir, `${name}.js`)).href);
  const instance = await module.instantiate(
    (file) => WebAssembly.compile(readFileSync(join(dir, file))),
    importObject,
  );
  return { tool: instance.tool, imports };
}

/** execute() as { ok } or { err }: jco throws an `err` as a ComponentError with a payload. */
function run(tool, name, args) {
  try {
    return { ok: tool.execute(name, typeof args === 'string' ? args : JSON.stringify(args)) };
  } catch (error) {
    if (error && 'payload' in error) return { err: error.payload };
    throw error;
  }
}

const workspace = join(scratch, 'workspace');
before(() => {
  mkdirSync(join(workspace, 'docs'), { recursive: true });
  writeFileSync(
    join(workspace, 'docs/guide.md'),
    [
      '# Guide',
      'Read [the spec](https://example.com/spec) first.',
      '',
      'Install',
      '-------',
      '```bash',
      '# not a heading',
      'make',
      '```',
      '### Details',
      '![diagram](d.png)',
      '',
      '## Usage',
    ].join('\n'),
  );
  writeFileSync(
    join(workspace, 'mod.py'),
    [
      '"""A module."""',
      'import asyncio',
      '',
      '',
      'class Greeter(Base, metaclass=Meta):',
      '    """Says hello."""',
      '',
      '    def __init__(self, name: str = "world") -> None:',
      '        self.name = name',
      '',
      '    @property',
      '    def _secret(self):',
      '        return 1',
      '',
      '    async def greet(self, *args, loud=False, **kw) -> str:',
      '        """Greets.',
      '',
      '        More text."""',
      '        def inner(x):',
      '            return x',
      '        return inner(self.name)',
      '',
      '',
      'def _helper(a, /, b):',
      '    pass',
    ].join('\n'),
  );
  writeFileSync(join(workspace, 'broken.py'), 'def f(:\n    pass\n');
  fakeEnv.setWorkspace(workspace);
});

function definitionOf(tool, expectedName) {
  const definitions = tool.definitions();
  assert.equal(definitions.length, 1);
  assert.equal(definitions[0].name, expectedName);
  const schema = JSON.parse(definitions[0].parametersJson);
  assert.equal(schema.type, 'object');
  assert.deepEqual(schema.required, ['path']);
  return schema;
}

const markdownWasm = join(plugins, 'markdown_outline.wasm');
describe('markdown_outline.wasm', { skip: !existsSync(markdownWasm) && 'not built' }, () => {
  let tool;
  before(async () => {
    ({ tool } = await load(markdownWasm));
  });

  test('defines markdown_outline', () => {
    const schema = definitionOf(tool, 'markdown_outline');
    assert.equal(schema.properties.max_depth.type, 'integer');
  });

  test('outlines a document read through the execution environment', () => {
    const { ok } = run(tool, 'markdown_outline', { path: 'docs/guide.md' });
    assert.equal(
      ok,
      [
        'docs/guide.md: 13 lines, 4 headings',
        'links: 1, images: 1, link reference definitions: 0',
        'fenced code blocks: 1 (bash 1)',
        '',
        '# Guide  [L1-13]',
        '  ## Install  [L4-12]',
        '    ### Details  [L10-12]',
        '  ## Usage  [L13]',
      ].join('\n'),
    );
    const { ok: shallow } = run(tool, 'markdown_outline', { path: 'docs/guide.md', max_depth: 1 });
    assert.match(shallow, /# Guide {2}\[L1-13\]\n\(3 headings deeper than level 1 hidden\)$/);
  });

  test('reports errors as err results', () => {
    assert.deepEqual(run(tool, 'markdown_outline', { path: 'docs/missing.md' }), {
      err: 'not found: docs/missing.md does not exist',
    });
    assert.match(run(tool, 'markdown_outline', { path: 'mod.py' }).err, /^not a Markdown file/);
    assert.match(run(tool, 'markdown_outline', { path: 'a.md', max_depth: 9 }).err, /max_depth/);
    assert.match(run(tool, 'markdown_outline', '{oops').err, /not valid JSON/);
    assert.match(run(tool, 'other_tool', {}).err, /unknown tool/);
  });
});

const pythonWasm = join(plugins, 'python_outline.wasm');
describe('python_outline.wasm', { skip: !existsSync(pythonWasm) && 'not built' }, () => {
  let tool;
  before(async () => {
    ({ tool } = await load(pythonWasm));
  });

  test('defines python_outline', () => {
    const schema = definitionOf(tool, 'python_outline');
    assert.equal(schema.properties.include_private.type, 'boolean');
  });

  test('outlines a module read through the execution environment', () => {
    const { ok } = run(tool, 'python_outline', { path: 'mod.py' });
    assert.equal(
      ok,
      [
        'mod.py: 25 lines, 1 class, 1 function, 2 methods (private names hidden)',
        'module docstring: A module.',
        '',
        'class Greeter(Base, metaclass=Meta)  [L5-21]  # Says hello.',
        "  def __init__(self, name: str='world') -> None  [L8-9]",
        '  async def greet(self, *args, loud=False, **kw) -> str  [L15-21]  # Greets.',
        '    def inner(x)  [L19-20]',
      ].join('\n'),
    );
    const { ok: all } = run(tool, 'python_outline', { path: 'mod.py', include_private: true });
    assert.match(all, /\n {2}@property def _secret\(self\) {2}\[L11-13\]\n/);
    assert.match(all, /\ndef _helper\(a, \/, b\) {2}\[L24-25\]$/);
  });

  test('reports errors as err results', () => {
    assert.deepEqual(run(tool, 'python_outline', { path: 'nope.py' }), {
      err: 'not found: nope.py does not exist',
    });
    assert.match(
      run(tool, 'python_outline', { path: 'broken.py' }).err,
      /^syntax error in broken\.py at line 1, column \d+: /,
    );
    assert.match(run(tool, 'python_outline', { path: 'docs/guide.md' }).err, /^not a Python file/);
    assert.match(run(tool, 'python_outline', { path: 'mod.py', include_private: 1 }).err, /boolean/);
    assert.match(run(tool, 'other_tool', {}).err, /unknown tool/);
  });
});
