#!/usr/bin/env bash
# `make run`: list the bundled plugins' namespaces, render every example view in every format into OUT, and replay
# the example event scripts. A view with problems (exit 1, e.g. examples/problems.json) still renders and its
# problems go to OUT/NAME.errors.txt; anything worse fails the run.
set -uo pipefail
hubhost="$1"; plugins="$2"; examples="$3"; out="$4"
failed=0

echo "== hubhost list-namespaces --plugins $plugins"
"$hubhost" list-namespaces --plugins "$plugins" || { echo "list-namespaces failed"; failed=1; }

mkdir -p "$out"
# Runs a command whose exit 0 means clean and 1 means "done, with problems listed in ERRORS".
run_step() {
  local what="$1" errors="$2"; shift 2
  "$@" 2>>"$errors"
  case $? in
    0) echo "wrote $what" ;;
    1) echo "wrote $what (with problems, see $errors)" ;;
    *) echo "FAILED $what (see $errors)"; failed=1 ;;
  esac
}

echo "== hubhost render examples/*.json"
for view in "$examples"/*.json; do
  name=$(basename "$view" .json)
  rm -f "$out/$name.errors.txt"
  for format in json svg html text; do
    run_step "$out/$name.$format" "$out/$name.errors.txt" \
      "$hubhost" render "$view" --plugins "$plugins" --format "$format" -o "$out/$name.$format"
  done
  [ -s "$out/$name.errors.txt" ] || rm -f "$out/$name.errors.txt"
done

# Event scripts: examples/events/NAME.jsonl is replayed against examples/events/NAME.json (trace and final state).
echo "== hubhost events examples/events/*.jsonl"
for script in "$examples"/events/*.jsonl; do
  [ -e "$script" ] || continue
  name=$(basename "$script" .jsonl)
  view="$examples/events/$name.json"
  [ -f "$view" ] || { echo "skipped $script: no $view"; continue; }
  errors="$out/events-$name.errors.txt"
  rm -f "$errors"
  run_step "$out/events-$name.trace.txt" "$errors" \
    sh -c '"$@" > "$0"' "$out/events-$name.trace.txt" "$hubhost" events "$view" "$script" --plugins "$plugins" \
      --assets "$examples/assets"
  run_step "$out/events-$name.trace.jsonl and $out/events-$name.final.svg" "$errors" \
    sh -c '"$@" > "$0"' "$out/events-$name.trace.jsonl" "$hubhost" events "$view" "$script" --plugins "$plugins" \
      --assets "$examples/assets" --json --format svg -o "$out/events-$name.final.svg"
  [ -s "$errors" ] || rm -f "$errors"
done

echo "== hubhost gallery: every component of the bundled plugins in each of its stories"
errors="$out/gallery.errors.txt"
rm -f "$errors"
run_step "$out/gallery.html" "$errors" "$hubhost" gallery --plugins "$plugins" --widths 320,375 -o "$out/gallery.html"
run_step "$out/gallery.png" "$errors" "$hubhost" gallery --plugins "$plugins" --format png -o "$out/gallery.png"
[ -s "$errors" ] || rm -f "$errors"

echo "== open $out/home.html or $out/gallery.html in a browser, or run: hubhost dev examples/home.json --plugins $plugins"
exit $failed
