# $1 pid, $2 ns ('' in listen mode), $3 host veth, $4 log, $5 lease files (space-
# separated, '' for none), $6 the SysV key ('' for none), $7 the POSIX queue's name
# ('' for none), $8 the run's high port, $9 the metadata addresses "M4,M6" ('' for
# none; their rules go, their routes went with the veth): stop everything we started. The canary removes its IPC objects on
# SIGTERM (and at its lease's end); it is given a second to, and only if it outlives
# that are its SysV ones removed here (a key it found taken is someone else's, and
# left alone). Whatever is left in its namespace (a start cut short: no pid yet) is
# asked to stop too before it is killed. Its POSIX queue, named after the run, is
# ours whoever made it: removed last, however the canary ended.
# Needs mq-rm.sh, alive.sh and stand-in-rules.sh before it. The stand-ins' rules go
# once the veth, and so their table's routes, are gone (those of any dead run too).
pid=$1; ns=$2; hv=$3; log=$4; leases=$5; sysv=$6; mq=$7; high=${8:-}; meta=${9:-}
if [ -n "$meta" ] && [ -n "$high" ]; then
  ip rule del prio 90 to "${meta%,*}" dport "$high" 2>/dev/null || true
  ip -6 rule del prio 90 to "${meta#*,}" dport "$high" 2>/dev/null || true
fi
if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
  i=0; while [ "$i" -lt 50 ] && alive "$pid"; do sleep 0.02; i=$((i + 1)); done
  if alive "$pid" && [ -n "$sysv" ]; then
    kill -9 "$pid" 2>/dev/null
    if command -v ipcrm >/dev/null 2>&1; then
      ipcrm -Q "$sysv" 2>/dev/null; ipcrm -M "$sysv" 2>/dev/null
    fi
  fi
fi
if [ -n "$ns" ]; then
  left=$(ip netns pids "$ns" 2>/dev/null)
  if [ -n "$left" ]; then
    for p in $left; do kill "$p" 2>/dev/null || true; done
    sleep 0.2
  fi
  for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
  ip netns del "$ns" 2>/dev/null || true
  # Gone with the namespace, unless that never held its peer.
  if [ -e "/sys/class/net/$hv" ]; then ip link del "$hv" 2>/dev/null || true; fi
  clean_meta_rules
fi
clean_iif_rules "$hv"
for lease in $leases; do
  if [ "$(cat "$lease" 2>/dev/null)" = "$ns" ]; then rm -f -- "$lease"; fi
done
if [ -n "$mq" ]; then mq_rm "${mq#/}"; fi
rm -f -- "$log"
exit 0
