#!/usr/bin/env bash
# Seeds the fuzz corpora: DIR/results from tests/data/<device>/'s results files and the
# examples', DIR/sim from the sim presets. Existing entries are kept, so a
# corpus grows across runs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:?usage: make_corpus.sh DIR}"
mkdir -p "$dir/results" "$dir/sim"
# Named <device>_<file>: the device folders hold files of the same name.
for recorded in "$root"/tests/data/*/*.json; do
  cp -n "$recorded" "$dir/results/$(basename "$(dirname "$recorded")")_$(basename "$recorded")"
done
for example in "$root"/docs/examples/*/results.json; do
  cp -n "$example" "$dir/results/example-$(basename "$(dirname "$example")").json"
done
cp -n "$root"/src/backends/sim/presets/*.json "$dir/sim/"
