#!/usr/bin/env bash
# Runs each fuzz target for SECONDS (default 60) on its corpus under
# build/fuzz/corpus, after building them (cmake --preset fuzz). Further
# arguments go to libFuzzer. Exits non-zero on the first target that finds
# something; the input is in build/fuzz/findings/. Prints each target's
# executions.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-60}"
shift || true
build="$root/build/fuzz"
"$root/fuzz/make_corpus.sh" "$build/corpus"
mkdir -p "$build/findings"
# Undefined behaviour stops the target like a crash, so its input is kept.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
for target in fuzz_results:results fuzz_reports:results fuzz_sim_config:sim; do
  name="${target%%:*}"
  corpus="$build/corpus/${target##*:}"
  mkdir -p "$build/corpus/$name"
  log="$build/findings/$name.log"
  echo "fuzz: $name for ${seconds}s" >&2
  # A new corpus directory per target (first) keeps what it found; the seeds
  # are read from the shared one. -rss_limit_mb: the bounds keep memory small;
  # -timeout: no single input may take 10 s.
  if ! "$build/$name" "$build/corpus/$name" "$corpus" -dict="$root/fuzz/json.dict" \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=1048576 \
      -artifact_prefix="$build/findings/$name-" -print_final_stats=1 "$@" >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "fuzz: $name found a failure; see $build/findings/" >&2
    exit 1
  fi
  echo "fuzz: $name: $(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}') executions" >&2
done
