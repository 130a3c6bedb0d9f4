# clean_run WORKDIR ID: everything run ID left on this machine and in WORKDIR.
# Patterns start with a bracket so that pkill never matches its own command line.
# The canary is asked first (SIGTERM: it removes its IPC objects) and given a
# second, before anything of the run is killed outright (its command line names
# the run too); its POSIX queues go by name in case it could not.
# Needs mq-rm.sh and stand-in-rules.sh before it.

# kill_tree PATTERN: every process whose command line matches, and every process below
# it (a sandbox's own children name no run: `sleep` under a launcher's `sh -c`), stopped
# first so that none forks past the listing, then killed.
kill_tree() {
  top=$(pgrep -f "$1" 2>/dev/null) || return 0
  all=$top
  while [ -n "$top" ]; do
    kill -STOP $top 2>/dev/null
    below=
    for p in $top; do below="$below $(pgrep -P "$p" 2>/dev/null)"; done
    top=$(echo $below)
    all="$all $top"
  done
  kill -KILL $all 2>/dev/null
}

clean_run() {
  wd=$1; id=$2
  case $id in ''|*[!0-9a-f]*) return 0;; esac
  if pkill -TERM -f "[c]anary-$id-" 2>/dev/null; then
    i=0; while [ "$i" -lt 50 ] && pgrep -f "[c]anary-$id-" >/dev/null 2>&1; do
      sleep 0.02; i=$((i + 1))
    done
  fi
  kill_tree "[h]arness-$id-"
  kill_tree "[c]anary-$id-"
  mq_rm "harness-$id-*"
  for ns in $(ip netns list 2>/dev/null | cut -d' ' -f1 | grep "^harness-$id-"); do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null
  done
  for dev in /sys/class/net/hv"$id"*; do
    [ -e "$dev" ] && ip link del "${dev##*/}" 2>/dev/null
  done
  clean_meta_rules
  clean_iif_rules "hv$id"
  if [ -d "$wd/runsc-root" ]; then
    for bin in runsc runc; do
      command -v "$bin" >/dev/null 2>&1 || continue
      for c in $("$bin" --root "$wd/runsc-root" list -quiet 2>/dev/null | grep "^harness-$id-"); do
        "$bin" --root "$wd/runsc-root" delete --force "$c" >/dev/null 2>&1
      done
    done
  fi
  rm -rf -- "$wd/cells/harness-$id-"* "$wd/fs/harness-$id-"* 2>/dev/null
  # The fixtures' sentinels outside them (filesystem.Sentinels.places).
  rm -f -- /tmp/harness-sentinel-harness-"$id"-* /var/tmp/harness-sentinel-harness-"$id"-* \
    "$wd"/harness-sentinel-harness-"$id"-* 2>/dev/null
  # Its decoys (hostside/hostfs.py), where its registry says, by their own name only.
  if [ -f "$wd/runs/$id.decoys" ]; then
    while IFS= read -r p; do
      case ${p##*/} in .harness-decoy-"$id"-*) rm -rf -- "$p" 2>/dev/null;; esac
    done < "$wd/runs/$id.decoys"
    rm -f -- "$wd/runs/$id.decoys"
  fi
  rm -f -- "$wd/canary-$id-"*.log "$wd/supervisor-$id-"* "$wd/runs/$id.lease" \
    "$wd/runs/$id.lock"
  echo "cleaned $id"
}
