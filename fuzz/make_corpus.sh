#!/usr/bin/env bash
# Seeds the fuzz corpora: DIR/results from tests/data's results files and the
# examples', DIR/sim from the sim presets. Existing entries are kept, so a
# corpus grows across runs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:?usage: make_corpus.sh DIR}"
mkdir -p "$dir/results" "$dir/sim"
cp -n "$root"/tests/data/*.json "$dir/results/"
for example in "$root"/docs/examples/*/results.json; do
  cp -n "$example" "$dir/results/example-$(basename "$(dirname "$example")").json"
done
cp -n "$root"/src/backends/sim/presets/*.json "$dir/sim/"
