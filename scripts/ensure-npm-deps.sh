#!/usr/bin/env bash
# Installs a folder's pinned npm dependencies (`npm ci`) when node_modules is missing or older
# than the lockfile: ensure-npm-deps.sh DIR.
set -euo pipefail
dir=${1:?usage: ensure-npm-deps.sh DIR}
command -v node >/dev/null || { echo "ensure-npm-deps: error: node is not installed" >&2; exit 1; }
command -v npm >/dev/null || { echo "ensure-npm-deps: error: npm is not installed" >&2; exit 1; }
if [ ! -f "$dir/node_modules/.package-lock.json" ] ||
  [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
  echo "ensure-npm-deps: installing the npm dependencies of $dir (npm ci)" >&2
  # npm 11 leaves other platforms' optional packages (jco's and rolldown's native bindings)
  # out of a lockfile it writes, then `npm ci` calls that lockfile out of sync. `npm install
  # --no-save` installs the same locked versions without rewriting it.
  (cd "$dir" && { npm ci --no-audit --no-fund --loglevel=error >&2 2>/dev/null ||
    { echo "ensure-npm-deps: npm ci refused the lockfile; installing it with npm install --no-save" >&2
      npm install --no-save --no-audit --no-fund --loglevel=error >&2; }; })
fi
