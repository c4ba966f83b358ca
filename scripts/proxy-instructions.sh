#!/usr/bin/env bash
# What the proxy's own code costs per upstream event, counted and not
# timed: the user-space instructions (valgrind --tool=callgrind) that
# nginx, `toolscan proxy` forwarding untouched, and `toolscan proxy`
# parsing calls spend per SSE event of the same replay upstream (the proxy
# crate's load example). The count does not move with the machine's load,
# so two builds can be compared to a few percent on a busy machine, where
# CPU time (scripts/load-vs-nginx.sh) moves by ±10 %.
#
#   scripts/proxy-instructions.sh [STREAMS] [TOOLSCAN_BINARY]
#
# STREAMS (default 10) concurrent streams: few enough that the proxy keeps
# up under valgrind, so each event arrives and is sent on its own (a
# proxy that falls behind reads several events at once and the count
# drops). Each side runs twice, with
# streams of 60 and of 120 events; the difference over the extra events is
# the cost of an event, and what is left of the first run the cost of a
# request (its connection, headers, the parser and its tools). Kernel time
# is not counted: on loopback the two proxies make the same system calls
# (one receive and one send an event; see `strace -c`), so the kernel's
# share is the same for both and the user-space share is where they
# differ. TOOLSCAN_BINARY defaults to target/release/toolscan.
#
# Needs valgrind and nginx (installed with apt-get when missing); builds
# the release binaries. Linux only; not run in CI.
#
# PROXY_CG_KEEP=DIR keeps each run's callgrind profile in DIR
# (SIDE-EVENTS.out, for callgrind_annotate: where the instructions go).
set -euo pipefail
cd "$(dirname "$0")/.."
streams=${1:-10}
toolscan=${2:-target/release/toolscan}

for tool in valgrind nginx; do
  if ! command -v "$tool" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$tool" ]; then
    echo "== installing $tool (apt-get)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$tool" >/dev/null
  fi
done
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

echo "== release build"
[ "$toolscan" != target/release/toolscan ] || cargo build --release --quiet -p toolscan-cli
cargo build --release --quiet -p toolscan-proxy --example load
load=target/release/examples/load

tmp=$(mktemp -d)
pid=
cleanup() {
  [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
up=18931
via=18932

cat >"$tmp/nginx.conf" <<EOF
worker_processes 1;
master_process off;
daemon off;
pid $tmp/nginx.pid;
error_log $tmp/error.log warn;
events { worker_connections 16384; }
http {
  access_log $tmp/access.log;
  upstream replay { server 127.0.0.1:$up; keepalive 1024; }
  server {
    listen 127.0.0.1:$via backlog=8192;
    location / {
      proxy_pass http://replay;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_request_buffering off;
    }
  }
}
EOF

# count SIDE TOOLS EVENTS: the instructions the proxy spent on STREAMS
# streams of EVENTS events (after a warm-up of 5 streams, not counted).
count() {
  local side=$1 tools=$2 events=$3
  rm -f "$tmp"/cg.*
  case $side in
    nginx) valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.%p" \
      "$nginx_bin" -c "$tmp/nginx.conf" -p "$tmp" 2>"$tmp/valgrind.log" & ;;
    *) valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.%p" \
      "$toolscan" proxy --workers 1 --listen "127.0.0.1:$via" --upstream "http://127.0.0.1:$up" \
      --format hermes 2>"$tmp/valgrind.log" & ;;
  esac
  pid=$!
  # Under valgrind the proxy takes a few seconds to listen.
  for _ in $(seq 1 100); do
    (echo >"/dev/tcp/127.0.0.1/$via") 2>/dev/null && break
    sleep 0.2
  done
  local url="http://127.0.0.1:$via/v1/chat/completions"
  "$load" --via "$url" --via-pid "$pid" --upstream-port "$up" --tools "$tools" \
    --streams 5 --every-stage yes >/dev/null 2>&1
  callgrind_control -z "$pid" >/dev/null 2>&1
  "$load" --via "$url" --via-pid "$pid" --upstream-port "$up" --tools "$tools" \
    --streams "$streams" --tokens "$events" --every-stage yes >/dev/null 2>&1
  callgrind_control -d "$pid" >/dev/null 2>&1
  kill -INT "$pid" 2>/dev/null || true
  sleep 1
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=
  # The dump after the zeroing is the file with the suffix `.1`.
  if [ -n "${PROXY_CG_KEEP:-}" ]; then
    mkdir -p "$PROXY_CG_KEEP"
    cat "$tmp"/cg.*.1 >"$PROXY_CG_KEEP/$side-$events.out"
  fi
  grep -h '^totals:' "$tmp"/cg.*.1 | awk '{print $2}'
}

: >"$tmp/rows"
for side in nginx forward parse; do
  tools=no
  [ "$side" = parse ] && tools=yes
  echo "== $side"
  short=$(count "$side" "$tools" 60)
  long=$(count "$side" "$tools" 120)
  echo "$side $short $long" >>"$tmp/rows"
done

python3 - "$tmp/rows" "$streams" <<'EOF'
import sys
streams = int(sys.argv[2])
rows = {}
for line in open(sys.argv[1]):
    side, short, long = line.split()
    event = (int(long) - int(short)) / (60 * streams)
    request = (int(short) - event * 60 * streams) / streams
    rows[side] = (event, request)
n_event, n_request = rows["nginx"]
print("| side | instructions an event | ÷ nginx | instructions a request | ÷ nginx |")
print("|---|---:|---:|---:|---:|")
for side in ("nginx", "forward", "parse"):
    event, request = rows[side]
    print(f"| {side} | {event:,.0f} | {event / n_event:.2f}× | {request:,.0f} | {request / n_request:.2f}× |")
EOF
