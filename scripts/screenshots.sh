#!/usr/bin/env bash
# Regenerates every PNG in screenshots/ from the scenes in scenes/ (and one trace), with the app's own
# `screenshot` command (a real window). Starts its own Xvfb when DISPLAY is unset.
# Usage: scripts/screenshots.sh [FIGURE...]   (default: every figure below)
# SCREENSHOT_BIN=target/release/aabb-debugger uses that binary (the figures that state
# timings should come from a release build); SCREENSHOT_NO_BUILD=1 skips the debug build.
set -euo pipefail
cd "$(dirname "$0")/.."

# figure name | scene file | extra arguments
FIGURES=(
  "choi-results|scenes/choi-results.ron|--view both"
  "choi-move-within-margin|scenes/choi-move-within-margin.ron|--view both --steps 20 --select 5"
  "choi-move-out-of-margin|scenes/choi-move-out-of-margin.ron|--view both --steps 4 --select 5"
  "choi-appear-disappear|scenes/choi-appear-disappear.ron|--view both --steps 20"
  "choi-velocity-fattening|scenes/choi-velocity-fattening.ron|--view world --layers walls,leaves,spheres,velocity,labels"
  "randall-simple-aabbs|scenes/randall-simple-aabbs.ron|--view world --layers walls,tight,contacts,labels"
  "randall-intersecting-aabbs|scenes/randall-intersecting-aabbs.ron|--view world --layers walls,tight,contacts,spheres,labels"
  "randall-bounding-aabbs|scenes/randall-bounding-aabbs.ron|--view world --layers walls,leaves,contacts,pairs,spheres,labels"
  "randall-tree-step1|scenes/randall-tree-step1.ron|--view both --steps 1"
  "randall-tree-step2|scenes/randall-tree-step2.ron|--view both --steps 1"
  "randall-tree-step3|scenes/randall-tree-step3.ron|--view both --steps 1"
  "randall-velocity-aabb|scenes/randall-velocity-aabb.ron|--view world --layers walls,leaves,spheres,velocity,labels"
  "abcd-view-and-hierarchy|scenes/abcd-view-and-hierarchy.ron|--view both"
  "gaul-5000-bodies|scenes/gaul-5000-bodies.ron|--view world --steps 120"
  "advisor-slow-dense|scenes/advisor-slow-dense.ron|--view world --advisor-margin 0.02:1.22:0.1 --advisor-lookahead 0,0.05,0.2 --advisor-steps 300 --timeout-secs 900"
  "advisor-fast-sparse|scenes/advisor-fast-sparse.ron|--view world --advisor-margin 0.02:1.22:0.1 --advisor-lookahead 0,0.05,0.2 --advisor-steps 300 --timeout-secs 900"
  "advisor-mixed-sizes|scenes/advisor-mixed-sizes.ron|--view world --advisor-margin 0.02:1.22:0.1 --advisor-lookahead 0,0.05,0.2 --advisor-steps 300 --timeout-secs 900"
)

WANT=("$@")
SIZE="${SCREENSHOT_SIZE:-1280x800}"

[ -n "${SCREENSHOT_NO_BUILD:-}" ] || cargo build --locked --bin aabb-debugger
BIN="${SCREENSHOT_BIN:-${CARGO_TARGET_DIR:-target}/debug/aabb-debugger}"

XVFB_PID=""
RUNTIME_DIR=""
cleanup() {
  if [ -n "$XVFB_PID" ]; then kill "$XVFB_PID" 2>/dev/null || true; fi
  if [ -n "$RUNTIME_DIR" ]; then rm -rf "$RUNTIME_DIR"; fi
}
trap cleanup EXIT
if [ -z "${DISPLAY:-}" ]; then
  NUM=99
  while [ -e "/tmp/.X11-unix/X$NUM" ] || [ -e "/tmp/.X$NUM-lock" ]; do NUM=$((NUM + 1)); done
  Xvfb ":$NUM" -screen 0 1920x1200x24 -nolisten tcp >/dev/null 2>&1 &
  XVFB_PID=$!
  for _ in $(seq 1 100); do
    [ -e "/tmp/.X11-unix/X$NUM" ] && break
    sleep 0.1
  done
  export DISPLAY=":$NUM"
  unset WAYLAND_DISPLAY
  RUNTIME_DIR="$(mktemp -d)"
  chmod 700 "$RUNTIME_DIR"
  export XDG_RUNTIME_DIR="$RUNTIME_DIR"
fi

mkdir -p screenshots
made=0
missing=0
for entry in "${FIGURES[@]}"; do
  IFS='|' read -r name scene extra <<<"$entry"
  if [ "${#WANT[@]}" -gt 0 ] && [[ ! " ${WANT[*]} " == *" $name "* ]]; then continue; fi
  if [ ! -f "$scene" ]; then
    echo "screenshots: skipping $name: $scene does not exist" >&2
    missing=$((missing + 1))
    continue
  fi
  # shellcheck disable=SC2086
  "$BIN" screenshot "$scene" --out "screenshots/$name.png" --size "$SIZE" $extra
  made=$((made + 1))
done
# The window on a real pile: a trace made by the rapier example (3000 balls, 71 MB, kept out
# of git in the target folder and made only when missing), at step 400 with the timeline and
# the Advisor's sweep of the steps left.
if [ "${#WANT[@]}" -eq 0 ] || [[ " ${WANT[*]} " == *" trace-pile "* ]]; then
  TRACE="${CARGO_TARGET_DIR:-target}/pile.trace"
  if [ ! -f "$TRACE" ]; then
    cargo run --locked --release -p aabb-peers --example rapier_pile -- --out "$TRACE"
  fi
  "$BIN" screenshot "$TRACE" --out "screenshots/trace-pile.png" --size "$SIZE" \
    --view world --steps 400 --timeline
  "$BIN" screenshot "$TRACE" --out "screenshots/trace-pile-advisor.png" --size "$SIZE" \
    --view world --steps 400 --timeline \
    --advisor-margin 0:0.3:0.05 --advisor-lookahead 0,0.05 --advisor-steps 300 --timeout-secs 900
  made=$((made + 2))
fi
echo "screenshots: wrote $made PNGs to screenshots/ ($missing scenes missing)"
