#!/usr/bin/env bash
# `make run`: list the bundled plugins' namespaces, then render every example view in every format into OUT.
set -euo pipefail
hubhost="$1"; plugins="$2"; examples="$3"; out="$4"
echo "== hubhost list-namespaces --plugins $plugins"
"$hubhost" list-namespaces --plugins "$plugins"
mkdir -p "$out"
if "$hubhost" render --help >/dev/null 2>&1 && ls "$examples"/*.json >/dev/null 2>&1; then
  for view in "$examples"/*.json; do
    name=$(basename "$view" .json)
    for format in json svg html text; do
      "$hubhost" render "$view" --plugins "$plugins" --format "$format" -o "$out/$name.$format" 2>>"$out/$name.errors.txt" || true
      echo "wrote $out/$name.$format"
    done
  done
fi
# Event scripts: examples/events/NAME.jsonl is replayed against examples/events/NAME.json (trace and final state).
if "$hubhost" events --help >/dev/null 2>&1 && ls "$examples"/events/*.jsonl >/dev/null 2>&1; then
  for script in "$examples"/events/*.jsonl; do
    name=$(basename "$script" .jsonl)
    view="$examples/events/$name.json"
    [ -f "$view" ] || { echo "skipped $script: no $view"; continue; }
    "$hubhost" events "$view" "$script" --plugins "$plugins" > "$out/events-$name.trace.txt" 2>>"$out/events-$name.errors.txt" || true
    echo "wrote $out/events-$name.trace.txt"
    "$hubhost" events "$view" "$script" --plugins "$plugins" --json --format svg -o "$out/events-$name.final.svg" \
      > "$out/events-$name.trace.jsonl" 2>>"$out/events-$name.errors.txt" || true
    echo "wrote $out/events-$name.trace.jsonl and $out/events-$name.final.svg"
  done
fi
