#!/usr/bin/env bash
# make demo: start a daemon on the embedded default config in a temp dir,
# create the example tools, call them, show the audit log, stop the daemon.
set -euo pipefail
bin=${1:-bin}
root=$(cd "$(dirname "$0")/.." && pwd)
tc="$root/$bin/toolcage"
work=$(mktemp -d /tmp/toolcage-demo.XXXXXX)
export TOOLCAGE_SOCKET="$work/toolcage.sock" TOOLCAGE_DATA_DIR="$work/data"
# The weather tool's stub server listens on localhost: the network guard
# refuses loopback unless the config names the host, which the demo does.
export TOOLCAGE_HTTP_ALLOW_PRIVATE_HOSTS=localhost
daemon_pid="" stub_pid=""
cleanup() {
  if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
    kill -TERM "$daemon_pid"; wait "$daemon_pid" || true
  fi
  [ -n "$stub_pid" ] && kill "$stub_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

weather_key=demo-wx-key-Q7r2Lm9Xw4Kp
step "starting the stub weather API on localhost:18089 (it wants an API key, and echoes it)"
"$root/$bin/stubserver" -addr 127.0.0.1:18089 -api-key "$weather_key" &
stub_pid=$!

step "starting the daemon (socket $TOOLCAGE_SOCKET)"
"$tc" daemon --log-level warn &
daemon_pid=$!
for _ in $(seq 100); do "$tc" health >/dev/null 2>&1 && break; sleep 0.05; done
"$tc" health

step "storing the weather API key as a secret (read from stdin, encrypted at rest)"
printf %s "$weather_key" | "$tc" secrets set weather_api_key
"$tc" secrets list

step "creating the example tools"
for f in "$root"/examples/tools/*.yaml; do "$tc" tools create -f "$f"; done
"$tc" tools list

step "JavaScript: word_frequency"
"$tc" call word_frequency --arg text="the cat and the hat and the bat"

step "JavaScript: csv_analyzer"
"$tc" call csv_analyzer --args-json '{"csv":"name,score\nada,90\nbob,72\ncy,85","numeric_column":"score"}'

step "shell: word_count (a pipeline, run by sh -c with every value quoted)"
"$tc" call word_count --arg text="to be or not to be"

step "shell: what dns_lookup would run for a hostile argument (one argv element, no shell)"
"$tc" tools render dns_lookup --args-json '{"domain":"example.com; rm -rf ~","record_type":"MX"}'

step "the deny rules see through wrappers (no daemon needed)"
"$tc" policy shell -- env busybox sh -c 'rm -rf /' || echo "(exit status $?: refused by policy)"

step "HTTP: weather (URL built from the template, checked by the network guard; the daemon's egress proxy adds the key, and the API's echo of it is redacted)"
"$tc" call weather --arg city="Buenos Aires" --arg days=2

step "ad-hoc sandboxed code"
"$tc" js --code 'console.log("hello from the sandbox"); return utils.slugify(args.title)' --args-json '{"title":"Hello, Tool Cage!"}'

step "a runaway loop is stopped by its time limit"
"$tc" js --code 'while (true) {}' --timeout 300ms || echo "(exit status $?, as expected)"

step "the network guard refuses the cloud metadata endpoint"
"$tc" policy url --allow-domain 169.254.169.254 http://169.254.169.254/latest/meta-data/ || echo "(exit status $?: refused by policy)"

step "audit log"
"$tc" audit --limit 10

step "stopping the daemon"
kill -TERM "$daemon_pid"; wait "$daemon_pid"; daemon_pid=""
echo "done."
