#!/usr/bin/env bash
# Live-link smoke test: the debugger listens (`aabb-debugger listen --port 0 --out ...`), and each
# real engine example streams to it through its recorder: the C program (bouncing boxes, through
# recorders/c/aabb_recorder.h), pymunk (Chipmunk2D, through recorders/python/aabb_recorder.py;
# skipped with a message only when pymunk is not installed), rapier2d and Box2D (through the Rust
# recorder). Each received stream must be recorded whole (the engine's BYE arrived, no step
# dropped) and then run through the tree, brute force and sweep-and-prune with the same pairs;
# rapier's own broad phase, streamed with its boxes, is checked (`check`: exit 1 on a missed
# pair, a refused tree or a pair whose fat boxes are apart); so is Box2D's (its fat boxes,
# pairs and counts).
# Usage: scripts/live-smoke.sh  (CI_SMOKE_BIN=PATH: the debugger binary; else it is built)
set -euo pipefail
cd "$(dirname "$0")/.."

BIN="${CI_SMOKE_BIN:-}"
if [ -z "$BIN" ]; then
  cargo build --locked --bin aabb-debugger
  BIN="${CARGO_TARGET_DIR:-target}/debug/aabb-debugger"
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"; jobs -p | xargs -r kill 2>/dev/null || true' EXIT

# Starts `listen` writing to $1; sets PORT and LISTEN_PID.
start_listen() {
  local out="$1"
  "$BIN" listen --port 0 --out "$out" --json >"$out.log" 2>"$out.err" &
  LISTEN_PID=$!
  for _ in $(seq 1 100); do
    if [ -s "$out.log" ]; then break; fi
    sleep 0.05
  done
  PORT=$(head -n1 "$out.log" | sed -E 's/.*:([0-9]+)".*/\1/')
  if ! [[ "$PORT" =~ ^[0-9]+$ ]]; then
    echo "live-smoke: listen did not say its port:"; cat "$out.log" "$out.err"; exit 1
  fi
}

# Waits for `listen` to end; checks the engine ended cleanly and the stream runs alike on every
# broad phase.
check_received() {
  local out="$1" name="$2"
  if ! wait "$LISTEN_PID"; then
    echo "live-smoke: $name: listen failed:"; tail -n 3 "$out.log"; cat "$out.err"; exit 1
  fi
  local last
  last=$(tail -n1 "$out.log")
  echo "live-smoke: $name: $last"
  if ! echo "$last" | python3 -c \
    'import json,sys; r=json.load(sys.stdin); sys.exit(0 if r["end"] == "bye" and r["dropped_steps"] == 0 and r["steps"] > 0 else 1)'; then
    echo "live-smoke: $name: the stream did not end cleanly with every step"; exit 1
  fi
  local pairs=""
  for bp in tree brute sap; do
    local p
    p=$("$BIN" run "$out" --steps 100000 --broadphase "$bp" --json | python3 -c \
      'import json,sys; r=json.load(sys.stdin); print(r["steps"], len(r["candidate_pairs"]), len(r["contacts"]), r["reinserts_total"] if "reinserts_total" in r else "")')
    if [ -n "$pairs" ] && [ "$p" != "$pairs" ]; then
      echo "live-smoke: $name: $bp gives $p, tree gave $pairs"; exit 1
    fi
    pairs="$p"
  done
  echo "live-smoke: $name: tree, brute force and SAP agree (steps, pairs, contacts at the end: $pairs)"
}

echo "live-smoke: C recorder"
cc -std=c99 -O2 -Wall -Wextra -Werror -o "$WORK/bounce" recorders/c/example_bounce.c
start_listen "$WORK/c.aabbstream"
"$WORK/bounce" --port "$PORT" --fast "$WORK/unused.aabbstream"
check_received "$WORK/c.aabbstream" "C bouncing boxes"

if python3 -c 'import pymunk' 2>/dev/null; then
  echo "live-smoke: Python recorder with pymunk"
  start_listen "$WORK/py.aabbstream"
  python3 recorders/python/examples/pymunk_pile.py --port "$PORT" --steps 300 --fast "$WORK/unused-py.aabbstream"
  check_received "$WORK/py.aabbstream" "pymunk pile"
else
  echo "live-smoke: pymunk is not installed: the pymunk example is skipped"
fi

echo "live-smoke: Rust recorder with rapier2d"
start_listen "$WORK/rapier.aabbstream"
cargo run --locked --quiet -p aabb-peers --example rapier_pile -- --port "$PORT" --balls 300 --steps 400
check_received "$WORK/rapier.aabbstream" "rapier pile"
# rapier's own broad phase came with it: its trees validate, it misses no pair.
if ! rapier_check=$("$BIN" check "$WORK/rapier.aabbstream" 2>&1); then
  echo "live-smoke: rapier pile: its own broad phase has errors:"; echo "$rapier_check"; exit 1
fi
printf '%s\n' "$rapier_check" | sed -n '1,8s/^/live-smoke: rapier pile: /p'

echo "live-smoke: Rust recorder with Box2D (boxdd)"
start_listen "$WORK/box2d.aabbstream"
cargo run --locked --quiet -p aabb-peers --example box2d_pile -- --port "$PORT" --balls 300 --steps 400
check_received "$WORK/box2d.aabbstream" "Box2D pile"
if ! box2d_check=$("$BIN" check "$WORK/box2d.aabbstream" 2>&1); then
  echo "live-smoke: Box2D pile: its own broad phase has errors:"; echo "$box2d_check"; exit 1
fi
printf '%s\n' "$box2d_check" | sed -n '1,8s/^/live-smoke: Box2D pile: /p'
echo "live-smoke: ok"
