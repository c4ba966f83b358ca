#!/usr/bin/env bash
# What `toolscan proxy` costs against a plain reverse proxy, measured side
# by side: the same SSE upstream (the proxy crate's load example: a replay
# server sending a Qwen3-style answer with a tool call, 60 events a stream
# at 50 events/s) through nginx and through `toolscan proxy`, in turn, A B C
# A B C…, and the CPU time each proxy took per upstream event (from /proc,
# all the proxy's processes and threads).
#
#   scripts/load-vs-nginx.sh [ROUNDS] [STREAMS]
#
# ROUNDS (default 3) rounds of the three sides; STREAMS (default
# 250,500,1000) the concurrent streams of each stage. The sides:
#
#   nginx     nginx 1 worker, proxy_buffering off, upstream keepalive
#   forward   toolscan proxy --workers 1 (one thread), requests without `tools`
#             (the answer is forwarded untouched)
#   parse     the same proxy, requests with `tools` (the answer is parsed
#             and its call rewritten into `tool_calls`)
#
# Prints, per stage, the median over the rounds of each side's µs of CPU
# per upstream event (and, in brackets, the part of it in the kernel) and
# p99 latency, and the ratios to nginx; then each round's ratios and their
# median. Installs
# nginx with apt-get when it is missing; builds the release binaries
# (`cargo build --release`). Linux only. Not run in CI: it is a
# measurement, not a test.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
rounds=${1:-3}
streams=${2:-250,500,1000}

if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  echo "== installing nginx (apt-get)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
fi
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

echo "== release build"
cargo build --release --quiet -p toolscan-cli
cargo build --release --quiet -p toolscan-proxy --example load
toolscan="$root/target/release/toolscan"
load="$root/target/release/examples/load"

ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" || true
up=18801
via_nginx=18802
via_toolscan=18803
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

cat >"$tmp/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $tmp/nginx.pid;
error_log $tmp/error.log warn;
events { worker_connections 16384; }
http {
  access_log $tmp/access.log;
  upstream replay { server 127.0.0.1:$up; keepalive 1024; }
  server {
    listen 127.0.0.1:$via_nginx backlog=8192;
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
"$nginx_bin" -c "$tmp/nginx.conf" -p "$tmp" &
nginx_master=$!
pids+=("$nginx_master")
"$toolscan" proxy --workers 1 --listen "127.0.0.1:$via_toolscan" \
  --upstream "http://127.0.0.1:$up" --format hermes 2>"$tmp/toolscan.log" &
toolscan_pid=$!
pids+=("$toolscan_pid")
sleep 1
nginx_pids=$(echo "$nginx_master" $(pgrep -P "$nginx_master") | tr ' ' ',')

# side → "url pids tools"
side_args() {
  case $1 in
    nginx) echo "http://127.0.0.1:$via_nginx/v1/chat/completions $nginx_pids no" ;;
    forward) echo "http://127.0.0.1:$via_toolscan/v1/chat/completions $toolscan_pid no" ;;
    parse) echo "http://127.0.0.1:$via_toolscan/v1/chat/completions $toolscan_pid yes" ;;
  esac
}

: >"$tmp/results"
for round in $(seq 1 "$rounds"); do
  for side in nginx forward parse; do
    read -r url pid tools <<<"$(side_args "$side")"
    echo "== round $round: $side"
    "$load" --via "$url" --via-pid "$pid" --upstream-port "$up" --tools "$tools" \
      --streams "$streams" --every-stage yes | tee "$tmp/out" | grep -v '^RESULT' || true
    grep '^RESULT' "$tmp/out" | sed "s/^RESULT/$side/" >>"$tmp/results"
  done
done

echo "== median over $rounds round(s): µs of proxy CPU per upstream event [of it in the kernel] (p99 ms)"
python3 - "$tmp/results" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    side, *fields = line.split()
    kv = dict(f.split("=", 1) for f in fields)
    rows.setdefault((int(kv["streams"]), side), []).append(
        (float(kv["cpu_us_per_event"]), float(kv["p99_ms"]), kv["complete"],
         float(kv.get("sys_us_per_event", "nan"))))
stages = sorted({s for s, _ in rows})
print(f"| streams | nginx | forward | parse | forward ÷ nginx | parse ÷ nginx |")
print("|---:|---:|---:|---:|---:|---:|")
for n in stages:
    med = {}
    cells = []
    for side in ("nginx", "forward", "parse"):
        r = rows.get((n, side), [])
        if not r:
            cells.append("—")
            continue
        cpu = statistics.median(x[0] for x in r)
        p99 = statistics.median(x[1] for x in r)
        system = statistics.median(x[3] for x in r)
        med[side] = cpu
        cells.append(f"{cpu:.2f} [{system:.2f}] ({p99:.1f})")
    ratio = lambda s: f"{med[s] / med['nginx']:.2f}×" if s in med and med.get("nginx") else "—"
    print(f"| {n} | " + " | ".join(cells) + f" | {ratio('forward')} | {ratio('parse')} |")
# Each round's own ratios (a side against the nginx run just before it),
# and their median: the machine's load drifts between rounds more than
# within one, so these move less from run to run than the ratio of the
# medians above.
print()
print("| streams | forward ÷ nginx, per round | median | parse ÷ nginx, per round | median |")
print("|---:|---|---:|---|---:|")
for n in stages:
    base = [x[0] for x in rows.get((n, "nginx"), [])]
    cells = []
    for side in ("forward", "parse"):
        mine = [x[0] for x in rows.get((n, side), [])]
        per = [m / b for m, b in zip(mine, base) if b]
        cells.append(" ".join(f"{r:.2f}" for r in per) or "—")
        cells.append(f"{statistics.median(per):.2f}×" if per else "—")
    print(f"| {n} | " + " | ".join(cells) + " |")
EOF
