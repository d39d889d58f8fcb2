// A stand-in for the host's `agent:core/execution-environment` import, for running plugin
// components under Node (after `jco transpile`): files are read from a local directory, the
// way the native host confines a plugin's paths to the workspace.
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, normalize } from 'node:path';

let workspace = process.cwd();
export const calls = [];

/** Sets the directory that relative paths resolve against. */
export function setWorkspace(dir) {
  workspace = dir;
}

function resolve(path) {
  const clean = normalize(path);
  if (isAbsolute(clean) || clean.startsWith('..')) {
    throw { tag: 'denied', val: `${path} is outside the workspace` };
  }
  return join(workspace, clean);
}

export function readFile(path, range) {
  calls.push(['read-file', path]);
  const full = resolve(path);
  let stat;
  try {
    stat = statSync(full);
  } catch {
    throw { tag: 'not-found', val: `${path} does not exist` };
  }
  if (stat.isDirectory()) throw { tag: 'is-directory', val: `${path} is a directory` };
  const bytes = readFileSync(full);
  if (!range) return new Uint8Array(bytes);
  const start = Number(range.offset);
  return new Uint8Array(bytes.subarray(start, start + Number(range.length)));
}

function unsupported(name) {
  return () => {
    throw { tag: 'other', val: `${name} is not provided by the test environment` };
  };
}

export const writeFile = unsupported('write-file');
export const deleteFile = unsupported('delete-file');
export const renameFile = unsupported('rename-file');
export const createDirectory = unsupported('create-directory');
export const stat = unsupported('stat');
export const listDirectory = unsupported('list-directory');
export const grep = unsupported('grep');
export const glob = unsupported('glob');
export const spawn = () => {
  throw { tag: 'unsupported', val: 'no processes in the test environment' };
};
export const fileExists = (path) => {
  try {
    statSync(resolve(path));
    return true;
  } catch {
    return false;
  }
};
export const workingDirectory = () => workspace;
export const platform = () => 'test';
export const osVersion = () => 'test';
export const scratchDirectory = () => undefined;
export class Process {}
