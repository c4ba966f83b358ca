#!/usr/bin/env bash
# Runs the fuzz targets of fuzz/ (see fuzz/README.md).
#
#   scripts/fuzz.sh TARGET|all [SECONDS] [LIBFUZZER_ARGS...]
#
# TARGET is feed_chunks, format_file, sse_rewrite, render or held_linear; `all` runs each in
# turn for SECONDS (default 60) each. Before a run the target writes its
# seeds (from tests/corpus/*.jsonl and examples/) into fuzz/corpus/TARGET
# and its dictionary into fuzz/artifacts/TARGET.dict; findings go to
# fuzz/artifacts/TARGET/, the log to fuzz/artifacts/logs/. Extra arguments
# go to libFuzzer (e.g. -max_len=65536).
#
# Environment:
#   FUZZ_SANITIZER  none (default: fastest; the core forbids unsafe code
#                   outside its SIMD and UTF-8 spots) or address (ASan, for
#                   those spots: a few times slower)
#   FUZZ_JOBS       parallel fuzzing processes (default 1; libFuzzer -fork)
#   FUZZ_KEEP_GOING 1: go on after a finding (libFuzzer -fork with
#                   -ignore_crashes/-ignore_timeouts/-ignore_ooms; each
#                   finding is still written to fuzz/artifacts/TARGET/)
#   FUZZ_MAX_LEN    largest input libFuzzer makes (default 4096; 512 for
#                   render and 256 for held_linear, whose inputs are
#                   repeated up to a thousand times)
#   TOOLSCAN_FUZZ_KNOWN  panic locations (FILE:LINE, comma-separated) that
#                   are known findings being fixed: skipped, not reported
#   FUZZ_TIMEOUT    seconds one input may take before it is a finding
#                   (default 10)
#   FUZZ_TRACE_COMPARES  0: build without libFuzzer's comparison tracing
#                   (cargo fuzz --no-trace-compares, into fuzz/target/fast):
#                   2.4-2.8x the executions a second on the slow targets,
#                   at the cost of comparison-guided mutations (the
#                   dictionary still supplies the formats' literals)
#
# Installs cargo-fuzz if it is missing; needs a nightly toolchain (installed
# with rustup if missing) and a C++ compiler (libFuzzer).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

all_targets=(feed_chunks format_file sse_rewrite render held_linear)
usage() { sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
target=$1
shift
secs=${1:-60}
[ $# -ge 1 ] && shift
case "$secs" in *[!0-9]* | '') usage ;; esac
case "$target" in
  all) targets=("${all_targets[@]}") ;;
  feed_chunks | format_file | sse_rewrite | render | held_linear) targets=("$target") ;;
  *) usage ;;
esac
sanitizer=${FUZZ_SANITIZER:-none}
jobs=${FUZZ_JOBS:-1}
timeout=${FUZZ_TIMEOUT:-10}
keep_going=${FUZZ_KEEP_GOING:-0}
build_args=(-O --debug-assertions -s "$sanitizer")
target_dir="$root/fuzz/target"
if [ "${FUZZ_TRACE_COMPARES:-1}" = 0 ]; then
  target_dir="$root/fuzz/target/fast"
  build_args+=(--no-trace-compares --target-dir "$target_dir")
fi

# What the run needs.
if ! command -v rustup >/dev/null 2>&1; then
  echo "fuzz.sh: rustup is needed (for a nightly toolchain)" >&2
  exit 2
fi
if ! rustup toolchain list | grep -q '^nightly'; then
  rustup toolchain install nightly --profile minimal
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi

host=$(rustc -vV | sed -n 's/^host: //p')
mkdir -p fuzz/artifacts/logs
status=0
summary=()
for t in "${targets[@]}"; do
  case "$t" in
    render) max_len=${FUZZ_MAX_LEN:-512} ;;
    held_linear) max_len=${FUZZ_MAX_LEN:-256} ;;
    *) max_len=${FUZZ_MAX_LEN:-4096} ;;
  esac
  echo "== $t: build (sanitizer $sanitizer)"
  (cd fuzz && cargo +nightly fuzz build "${build_args[@]}" "$t")
  bin="$target_dir/$host/release/$t"
  corpus="$root/fuzz/corpus/$t"
  dict="$root/fuzz/artifacts/$t.dict"
  mkdir -p "$corpus" "$root/fuzz/artifacts/$t"

  echo "== $t: seeds"
  TOOLSCAN_FUZZ_SEED_OUT="$corpus" TOOLSCAN_FUZZ_DICT="$dict" TOOLSCAN_FUZZ_REPO="$root" "$bin"

  log="$root/fuzz/artifacts/logs/$t-$(date +%Y%m%d-%H%M%S).log"
  echo "== $t: fuzzing for ${secs}s ($jobs process(es)), log $log"
  args=(-max_total_time="$secs" -timeout="$timeout" -rss_limit_mb=2048 -max_len="$max_len"
    -dict="$dict" -artifact_prefix="$root/fuzz/artifacts/$t/" -print_final_stats=1)
  if [ "$keep_going" = 1 ]; then
    args+=(-fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  elif [ "$jobs" -gt 1 ]; then
    args+=(-fork="$jobs")
  fi
  set +e
  "$bin" "$corpus" "${args[@]}" "$@" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{n += $NF} END {if (NR) print n}' || true)
  [ -n "$execs" ] || execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#' || true)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || true)
  rate=$(grep -o 'exec/s: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || true)
  line="$t: ${execs:-?} executions in ${secs}s (${rate:-?}/s at the end), coverage ${cov:-?}, exit $rc"
  if [ "$rc" -ne 0 ]; then
    status=1
    line="$line — FINDING(S): $(ls "$root/fuzz/artifacts/$t" | wc -l) file(s) in fuzz/artifacts/$t/"
    grep -m1 -B2 -A12 "panicked at\|ERROR: libFuzzer\|ERROR: AddressSanitizer" "$log" >&2 || tail -20 "$log" >&2
  fi
  summary+=("$line")
done
echo "== summary"
printf '%s\n' "${summary[@]}"
exit $status
