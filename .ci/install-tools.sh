#!/usr/bin/env bash
# Debian packages whose programs judge the project's outputs in `npm test`: named-checkzone
# (bind9-utils), named (bind9), unbound and pdns_recursor (pdns-recursor) for the RPZ export and the
# zone the daemon serves, dig (bind9-dnsutils) to query them, the sqlite3 shell, promtool
# (prometheus), setpriv (util-linux) for readers without write access, strace to see which thread
# writes the database, script (bsdutils) for a pseudo-terminal, heaptrack for what threads leave
# allocated. Installed only if missing.
set -euo pipefail
declare -A needs=([named-checkzone]=bind9-utils [named]=bind9 [unbound]=unbound [pdns_recursor]=pdns-recursor [dig]=bind9-dnsutils [sqlite3]=sqlite3 [promtool]=prometheus [setpriv]=util-linux [strace]=strace [script]=bsdutils [heaptrack]=heaptrack [heaptrack_print]=heaptrack)
# A tool is here when an executable file of that name is on PATH or in /usr/sbin (bash's command -v
# also names a file it cannot execute).
have() {
  local found
  found="$(command -v "$1" 2>/dev/null)" && [[ -f "$found" && -x "$found" ]] && return 0
  [[ -f "/usr/sbin/$1" && -x "/usr/sbin/$1" ]]
}
missing=()
for tool in "${!needs[@]}"; do
  have "$tool" || missing+=("${needs[$tool]}")
done
if ((${#missing[@]} == 0)); then exit 0; fi
as_root=()
if [[ "$(id -u)" != 0 ]]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    # CI never skips a test: without these the suite cannot pass, so stop here and say why.
    echo "install-tools: missing Debian packages ${missing[*]}; run as root (or with passwordless sudo) to install them, or install them yourself" >&2
    exit 1
  fi
fi
echo "install-tools: installing ${missing[*]}"
"${as_root[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
still=()
for tool in "${!needs[@]}"; do
  have "$tool" || still+=("$tool")
done
if ((${#still[@]} > 0)); then
  echo "install-tools: still missing after the install: ${still[*]}" >&2
  exit 1
fi
