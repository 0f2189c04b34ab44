#!/usr/bin/env bash
# Smoke test of the dashboard as a person uses it: `ars demo` in a real
# terminal (tmux), keys sent, screens read back with capture-pane.
#
#   scripts/tmux_smoke.sh [--out DIR] [--size 160x48]
#
# ARS_BIN overrides the command (default: .venv/bin/ars). Exits 0 when every
# step showed what it should; otherwise prints the screen it was waiting on.
# Uses its own tmux server (-L), so it never touches a person's sessions.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=""
SIZE="160x48"
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT="$2"; shift 2 ;;
    --size) SIZE="$2"; shift 2 ;;
    *) echo "usage: $0 [--out DIR] [--size WxH]" >&2; exit 2 ;;
  esac
done
W="${SIZE%x*}"
H="${SIZE#*x}"
ARS_BIN="${ARS_BIN:-.venv/bin/ars}"
command -v tmux >/dev/null || { echo "tmux is not installed" >&2; exit 2; }

SOCK="ars-smoke-$$"
STATE="$(mktemp -d)/state"
SESSION="smoke"
T=(tmux -L "$SOCK")
cleanup() {
  "${T[@]}" kill-server 2>/dev/null || true
  rm -rf "$(dirname "$STATE")"
}
trap cleanup EXIT
[ -n "$OUT" ] && mkdir -p "$OUT"

screen() { "${T[@]}" capture-pane -p -t "$SESSION" 2>/dev/null || true; }

# wait_for TEXT [SECONDS]: until the screen shows TEXT
wait_for() {
  local text="$1" limit="${2:-30}" i=0
  while [ "$i" -lt $((limit * 10)) ]; do
    if screen | grep -qF -- "$text"; then return 0; fi
    sleep 0.1
    i=$((i + 1))
  done
  echo "FAIL: waited ${limit}s for: $text" >&2
  echo "---- screen ----" >&2
  screen >&2
  exit 1
}

keys() { "${T[@]}" send-keys -t "$SESSION" "$@"; sleep 0.3; }

snap() {  # snap NAME: keep the screen for the report
  if [ -n "$OUT" ]; then screen > "$OUT/$1-${SIZE}.txt"; fi
}

"${T[@]}" new-session -d -s "$SESSION" -x "$W" -y "$H" "$ARS_BIN demo --state $STATE"
wait_for "✓ done" 60  # the loops are listed (at 80 columns the header says whose decisions count, not "8 loops")
wait_for "? waiting"
snap loops
echo "ok: loops view (${SIZE})"

keys 2
wait_for "Request"
keys /
keys hotfix Enter
wait_for "Approval needed"
snap inbox
keys a
wait_for "Approve on"
keys y
wait_for "2 waiting" 60
echo "ok: inbox approve (a, y) resumed the loop"

keys 3
keys /
keys "neo4j outage" Enter
wait_for "sqlite ok" 30
wait_for "dense ok"  # `ars demo` embedded the episodes: the dense tier answers from the start
wait_for "Score ·"
snap recall
keys x
wait_for "Explain an episode"
keys Enter
wait_for "verdict:" 30
snap explain
echo "ok: recall with per-tier scores, explain"

keys 4
wait_for "Older"  # Checkpoints' own footer key: the view is on screen (the goal name alone could be Recall's)
wait_for "release-notes-0.2"
keys "]"
wait_for "entry #" 30
keys "["
keys "]"
snap checkpoints
keys f
wait_for "Forked:" 30  # the notice (one line at the top right)
echo "ok: checkpoints: [ ] stepped, f forked"

keys 1
wait_for "it/max"
keys "?"
wait_for "Keys"
keys Escape
keys q
i=0
while "${T[@]}" has-session -t "$SESSION" 2>/dev/null; do
  sleep 0.1; i=$((i + 1))
  if [ "$i" -gt 100 ]; then echo "FAIL: q did not quit" >&2; screen >&2; exit 1; fi
done
echo "ok: q quit"
echo "tmux smoke passed (${SIZE})"
