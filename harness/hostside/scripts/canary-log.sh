# canary_log PID LOG: the log, but only from a canary that is still alive. A dead
# canary would make a leaky sandbox look blocked (connection refused). Shared with
# the cell's envelope (envelope.sh). Needs alive.sh before it.
canary_log() {
  if ! alive "$1"; then
    echo "the canary (pid $1) is no longer running" >&2; return 3
  fi
  cat -- "$2"
}
