#!/usr/bin/env bash
# make demo: start a daemon on the embedded default config in a temp dir,
# create the example tools, call them, show the audit log, stop the daemon.
set -euo pipefail
bin=${1:-bin}
root=$(cd "$(dirname "$0")/.." && pwd)
tc="$root/$bin/toolcage"
work=$(mktemp -d /tmp/toolcage-demo.XXXXXX)
export TOOLCAGE_SOCKET="$work/toolcage.sock" TOOLCAGE_DATA_DIR="$work/data"
daemon_pid=""
cleanup() {
  if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
    kill -TERM "$daemon_pid"; wait "$daemon_pid" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "starting the daemon (socket $TOOLCAGE_SOCKET)"
"$tc" daemon --log-level warn &
daemon_pid=$!
for _ in $(seq 100); do "$tc" health >/dev/null 2>&1 && break; sleep 0.05; done
"$tc" health

step "creating the example tools"
for f in "$root"/examples/tools/*.yaml; do "$tc" tools create -f "$f"; done
"$tc" tools list

step "JavaScript: word_frequency"
"$tc" call word_frequency --arg text="the cat and the hat and the bat"

step "JavaScript: csv_analyzer"
"$tc" call csv_analyzer --args-json '{"csv":"name,score\nada,90\nbob,72\ncy,85","numeric_column":"score"}'

step "ad-hoc sandboxed code"
"$tc" js --code 'console.log("hello from the sandbox"); return utils.slugify(args.title)' --args-json '{"title":"Hello, Tool Cage!"}'

step "a runaway loop is stopped by its time limit"
"$tc" js --code 'while (true) {}' --timeout 300ms || echo "(exit status $?, as expected)"

step "audit log"
"$tc" audit --limit 10

step "stopping the daemon"
kill -TERM "$daemon_pid"; wait "$daemon_pid"; daemon_pid=""
echo "done."
