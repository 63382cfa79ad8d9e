#!/usr/bin/env bash
# The image under a memory limit, as a pod's limit would hold it: `docker run --memory M
# --memory-swap M --read-only` through one of three scenarios, then one line of figures.
#
#   bash test/container/memory-limit.sh IMAGE MEMORY SCENARIO     # e.g. threat-mirror:check 128m first-sync-200k
#
# Scenarios (the stand-in of the service runs on the host, no latency):
#   first-sync-200k  the daemon's first sync of 200,000 threats (one organization, 30 days), then
#                    3 scheduled runs (every 5 s)
#   daemon-20k       the daemon on 20,000 threats: its first sync, then a run every 2 s for 60 s
#                    with 10 lookups a second on /v1/lookup beside it
#   backfill-1m      a first `--backfill` of 1,000,000 threats (365 days) into an empty volume, one-shot
# Prints: `MEMORY SCENARIO oom=true|false exit=N health=H runs=N threats=N anon_peak_mib=N cgroup_peak_mib=N seconds=N`
# anon_peak: the most anonymous memory (heaps, stacks: what cannot be dropped under pressure) seen
# in the container's cgroup, sampled every 0.25 s; cgroup_peak: the kernel's own peak of what it
# charged the cgroup, the page cache of the database file included (the kernel reclaims that cache
# before it kills). Both from the host's cgroup files (cgroup v1 or v2); "n/a" where not found.
# Exit 0 when the container was not OOM-killed, ran every run, was healthy (a one-shot run: exited 0)
# and holds every threat;
# 1 otherwise; 2 when the setup failed. Sourced by check.sh for its memory-limit check.
set -uo pipefail

# The container's memory cgroup folder on the host: cgroup v1 (cgroupfs or systemd driver) or v2.
memory_cgroup_of() {
  local candidate
  for candidate in "/sys/fs/cgroup/memory/docker/$1" "/sys/fs/cgroup/memory/system.slice/docker-$1.scope" "/sys/fs/cgroup/system.slice/docker-$1.scope" "/sys/fs/cgroup/docker/$1"; do
    [[ -f $candidate/memory.stat ]] && { echo "$candidate"; return; }
  done
}

# Runs one scenario; prints the figures line; returns 0 when it held.
memory_limit_run() {
  local image=$1 memory=$2 scenario=$3
  local threats days=30 schedule runs_wanted extra_seconds
  case $scenario in
    first-sync-200k) threats=200000 schedule='*/5 * * * * *' runs_wanted=4 extra_seconds=0 ;;
    daemon-20k) threats=20000 schedule='*/2 * * * * *' runs_wanted=1 extra_seconds=60 ;;
    backfill-1m) threats=1000000 days=365 schedule='' runs_wanted=1 extra_seconds=0 ;;
    *) echo "unknown scenario $scenario (first-sync-200k, daemon-20k or backfill-1m)" >&2; return 2 ;;
  esac
  # A one-shot --backfill: no HTTP server, no health check; it holds when it exits 0 with every threat.
  local command=() one_shot=false
  if [[ $scenario == backfill-1m ]]; then
    one_shot=true
    command=(--backfill --from "$(node -e 'const d = new Date(); d.setUTCDate(d.getUTCDate() - Number(process.argv[1]) + 1); console.log(d.toISOString().slice(0, 10))' "$days")")
  fi
  local work name volume standin_pid lookups_pid="" url port started
  work=$(mktemp -d)
  name="tmm-$$-$RANDOM"
  volume="$name-data"
  node dist/src/standin/cli.js --port 0 --orgs acme --threats "$threats" --days "$days" --reports 0 >"$work/standin.out" 2>&1 &
  standin_pid=$!
  for _ in $(seq 1 150); do
    url=$(node -e 'try { console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8").split("\n")[0]).url) } catch {}' "$work/standin.out")
    [[ -n $url ]] && break
    sleep 0.2
  done
  if [[ -z $url ]]; then
    echo "the stand-in did not start: $(head -c 300 "$work/standin.out")" >&2
    kill "$standin_pid" 2>/dev/null
    rm -rf "$work"
    return 2
  fi
  port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
  started=$(date +%s)
  docker run -d --name "$name" --network host --read-only --memory "$memory" --memory-swap "$memory" -v "$volume:/data" \
    -e THREAT_MIRROR_API_URL="$url" -e THREAT_MIRROR_ORG=acme -e THREAT_MIRROR_API_KEY=standin-acme-key \
    -e THREAT_MIRROR_HTTP_PORT="$port" -e THREAT_MIRROR_SCHEDULE="$schedule" "$image" "${command[@]}" >/dev/null
  local id cgroup sampler_file="$work/anon-peak"
  id=$(docker inspect -f '{{.Id}}' "$name")
  cgroup=$(memory_cgroup_of "$id")
  echo 0 >"$sampler_file"
  if [[ -n $cgroup ]]; then
    (
      peak=0
      while [[ -d $cgroup ]]; do
        anon=$(awk '$1 == "total_rss" || $1 == "anon" { print $2; exit }' "$cgroup/memory.stat" 2>/dev/null)
        if [[ -n $anon ]] && ((anon > peak)); then peak=$anon; echo "$peak" >"$sampler_file"; fi
        sleep 0.25
      done
    ) &
  fi
  # Succeeded runs so far, from the log; stops waiting when the container has exited.
  local succeeded=0 deadline=$((started + 300))
  while (($(date +%s) < deadline)); do
    succeeded=$(docker logs "$name" 2>/dev/null | grep -c '"msg":"sync of organization \\"acme\\" succeeded"')
    # A one-shot run succeeded when it exited 0 (its summary is on stderr, not in a log line).
    if $one_shot && [[ $(docker inspect -f '{{.State.Running}}' "$name" 2>/dev/null) != true ]]; then
      [[ $(docker inspect -f '{{.State.ExitCode}}' "$name") == 0 ]] && succeeded=1
      break
    fi
    ! $one_shot && ((succeeded >= runs_wanted)) && break
    [[ $(docker inspect -f '{{.State.Running}}' "$name" 2>/dev/null) == true ]] || break
    sleep 0.5
  done
  if ((extra_seconds > 0)) && [[ $(docker inspect -f '{{.State.Running}}' "$name") == true ]]; then
    node -e '
      const [url] = process.argv.slice(1);
      setInterval(() => fetch(url + "/v1/lookup?value=http%3A%2F%2Fexample.com%2Fa&value=0x52908400098527886E0F7030069857D2E4169EE7").then((r) => r.arrayBuffer()).catch(() => undefined), 100);
    ' "http://127.0.0.1:$port" &
    lookups_pid=$!
    local until=$(($(date +%s) + extra_seconds))
    while (($(date +%s) < until)) && [[ $(docker inspect -f '{{.State.Running}}' "$name") == true ]]; do sleep 1; done
    kill "$lookups_pid" 2>/dev/null
    succeeded=$(docker logs "$name" 2>/dev/null | grep -c '"msg":"sync of organization \\"acme\\" succeeded"')
    runs_wanted=$((extra_seconds / 4))
  fi
  local health oom code count cgroup_peak="n/a" anon_peak="n/a"
  health=$(docker inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{end}}' "$name")
  if [[ -n $cgroup ]]; then
    cgroup_peak=$(cat "$cgroup/memory.max_usage_in_bytes" "$cgroup/memory.peak" 2>/dev/null | head -1)
    cgroup_peak=$((cgroup_peak / 1048576))
    anon_peak=$(($(cat "$sampler_file") / 1048576))
  fi
  docker stop -t 10 "$name" >/dev/null 2>&1
  oom=$(docker inspect -f '{{.State.OOMKilled}}' "$name")
  code=$(docker inspect -f '{{.State.ExitCode}}' "$name")
  count=$(docker run --rm --read-only --network none -v "$volume:/mirror:ro" --entrypoint node "$image" -e '
    const Database = require("better-sqlite3-napi");
    const db = new Database("/mirror/threat-mirror.db", { readonly: true, fileMustExist: true });
    console.log(db.prepare("SELECT count(*) FROM current_threats").pluck().get());' 2>/dev/null | tail -1)
  $one_shot && health=not-served
  echo "$memory $scenario oom=$oom exit=$code health=${health:-none} runs=$succeeded threats=${count:-0} anon_peak_mib=$anon_peak cgroup_peak_mib=$cgroup_peak seconds=$(($(date +%s) - started))"
  docker rm -f "$name" >/dev/null 2>&1
  docker volume rm -f "$volume" >/dev/null 2>&1
  kill "$standin_pid" 2>/dev/null
  rm -rf "$work"
  [[ $oom == false && $code == 0 && ($health == healthy || $one_shot == true) && $succeeded -ge $runs_wanted && $count == "$threats" ]]
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  cd "$(dirname "$0")/../.."
  (($# == 3)) || { sed -n '2,19p' "$0"; exit 2; }
  memory_limit_run "$@"
fi
