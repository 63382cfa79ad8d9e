#!/usr/bin/env bash
# Debian packages whose programs judge the project's outputs in `npm test`: named-checkzone
# (bind9-utils), named (bind9), unbound and pdns_recursor (pdns-recursor) for the RPZ export and the
# zone the daemon serves, dig (bind9-dnsutils) to query them, the sqlite3 shell, promtool
# (prometheus), setpriv (util-linux) for readers without write access, strace to see which thread
# writes the database, script (bsdutils) for a pseudo-terminal. Installed only if missing.
set -euo pipefail
declare -A needs=([named-checkzone]=bind9-utils [named]=bind9 [unbound]=unbound [pdns_recursor]=pdns-recursor [dig]=bind9-dnsutils [sqlite3]=sqlite3 [promtool]=prometheus [setpriv]=util-linux [strace]=strace [script]=bsdutils)
missing=()
for tool in "${!needs[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("${needs[$tool]}")
done
if ((${#missing[@]} == 0)); then exit 0; fi
if [[ "$(id -u)" != 0 ]]; then
  echo "install-tools: missing ${missing[*]} and not root; the tests that need them will skip" >&2
  exit 0
fi
echo "install-tools: installing ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
