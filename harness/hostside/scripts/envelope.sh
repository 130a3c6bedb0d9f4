# $1 marker; $2 sentinel root ('' for none), $3 token, $4 original content, $5 tag;
# $6 canary pid ('' for no canary), $7 canary log, $8 the places where no sentinel is
# made (newline-separated); $9 the barrier folder on the host ('' for no phases), $10
# the phases, one `NAME<TAB>HOOK` line each (HOOK: shell run on the host); $11 the
# staged probe, copied outside by fs_setup ('' for none); $12 the read-only grants'
# host folders where harness makes a folder of its own (newline-separated), $13 its
# file's token; $14 a phase hook's time limit (seconds); $15 the user the workload runs
# as, by the cell's policy ('' for none); $16 1 to look for the uids the sandbox's
# processes run as ('' not to); then the sandbox command's argv.
# Needs fs-sentinels.sh, alive.sh, canary-log.sh and phase-watch.sh before it.
# LC_ALL=C (so that ${#var} counts bytes) only once the sandbox command is done: it
# runs with the environment it was given.
marker=$1; root=$2; token=$3; original=$4; tag=$5; cpid=$6; clog=$7; skip=$8
bdir=$9; phases=${10}; probe=${11}; granted=${12}; gtoken=${13}; hlimit=${14}; wuser=${15}
watch=${16}; shift 16
ev=""
if [ -n "$root" ] &&
  ! err=$(fs_setup "$root" "$token" "$original" "$skip" "$probe" "$granted" "$gtoken" \
    2>&1 </dev/null); then
  LC_ALL=C; export LC_ALL
  rc=87
  ev="setup_error ${#err}
$err
"
else
  # The sandbox gets a pipe of its own (its status comes back on fd 3): a runtime that
  # makes its stdout non-blocking must not cut this script's report short on a full
  # pipe (EAGAIN). Neither extra descriptor reaches the sandbox.
  wpid=""; pf=""
  if [ -n "$bdir" ] && [ -n "$phases" ] && pf=$(mktemp 2>/dev/null); then
    phase_watch "$bdir" "$phases" "$hlimit" >"$pf" 2>/dev/null </dev/null &
    wpid=$!
  fi
  # A witness for priv-proc-access's way by a descriptor's owner (F_SETOWN): a host
  # process of uid 65534 that blocks SIGIO and SIGURG, so that one the sandbox makes the
  # kernel send it stays pending (its /proc status), nothing delivered. Stopped with
  # the sandbox. Without setpriv, or an env that blocks signals (coreutils 8.31),
  # there is none. It lives no longer than the cell may (`timeout -k GRACE LIMIT`
  # leads the sandbox command), so an envelope killed before it could stop it leaves
  # nothing for long.
  xpid=""; ypid=""; vpid=""; wlife=600
  if [ "$1" = timeout ] && [ "$2" = -k ]; then
    case "$3/$4" in
      *[!0-9./]*) ;;
      [0-9]*/[0-9]*) wlife=$(( ${3%%.*} + ${4%%.*} + 5 )) ;;
    esac
  fi
  if command -v setpriv >/dev/null 2>&1 && env --block-signal=URG true 2>/dev/null; then
    # Killed with this shell where setpriv can say so (util-linux 2.33): a killed
    # envelope leaves no witness sleeping out its time.
    die=""; setpriv --pdeathsig KILL true 2>/dev/null && die="--pdeathsig KILL"
    # shellcheck disable=SC2086
    setpriv --reuid=65534 --regid=65534 --clear-groups $die \
      env --block-signal=IO,URG sleep "$wlife" </dev/null >/dev/null 2>&1 &
    xpid=$!
    # $1 the tag (in its arguments: the probe tells its cell's witnesses by it), $2 a
    # witness's life, $3 the uid that has one already. It stops looking once it found one.
    WITNESS_WATCH='seen=" 0 65534 $3 "; n=0
for t in 0.2 0.3 0.5 1 1 2; do
  sleep "$t"
  for u in $(ps -eo uid=,args= 2>/dev/null |
    awk -v t=" --tag $1 " '"'"'index($0 " ", t) { print $1 }'"'"'); do
    case $seen in *" $u "*) continue ;; esac
    seen="$seen$u "
    awk -F: -v u="$u" '"'"'$3 == u { f = 1 } END { exit !f }'"'"' /etc/passwd || continue
    n=$((n + 1))
    setpriv --reuid="$u" --regid="$u" --clear-groups --pdeathsig KILL \
      env --block-signal=IO,URG sleep "$2" </dev/null >/dev/null 2>&1 &
  done
  [ "$n" -eq 0 ] || break
done
wait'
    # A second, of the uid the workload runs as (its policy's run_as_user, a name by this
    # host's passwd) where that is neither root nor 65534: the same-uid calls
    # (setpriority, sched_*, ioprio_set, F_SETOWN) reach a host process of its own uid,
    # and a workload of another uid has none of harness's to try them on. Only a uid
    # that is an account of this host's (its passwd): one no host process ever runs as
    # (a unique uid allocated to the sandbox alone) has no host process to stand for.
    case $wuser in
      "") wuid="" ;;
      *[!0-9]*) wuid=$(id -u -- "$wuser" 2>/dev/null) || wuid="" ;;
      *) wuid=$(expr "$wuser" + 0) ;;  # "00" is root, as 0 is
    esac
    if [ -n "$wuid" ] && [ "$wuid" != 0 ] && [ "$wuid" != 65534 ] &&
      awk -F: -v u="$wuid" '$3 == u { f = 1 } END { exit !f }' /etc/passwd; then
      # shellcheck disable=SC2086
      setpriv --reuid="$wuid" --regid="$wuid" --clear-groups $die \
        env --block-signal=IO,URG sleep "$wlife" </dev/null >/dev/null 2>&1 &
      ypid=$!
    fi
    # And one of each uid the sandbox's own processes turn out to run as on this host
    # (those whose arguments hold the probe's `--tag TAG`), looked for a few times in its
    # first five seconds, in a cell of the privilege floor's: a workload whose policy names another user or none, or a user
    # namespace's root that is an unprivileged uid here; an account of this host's alone,
    # as above. Where the watcher dies with this shell (--pdeathsig), and its witnesses
    # with it.
    if [ -n "$watch" ] && [ -n "$die" ] && command -v ps >/dev/null 2>&1 &&
      command -v awk >/dev/null 2>&1; then
      # shellcheck disable=SC2086
      setpriv $die setsid sh -c "$WITNESS_WATCH" harness-witness "$tag" "$wlife" "$wuid" \
        </dev/null >/dev/null 2>&1 &
      vpid=$!
    fi
    i=0  # until each is sleep (exec'd, its signals blocked), at most a second
    while { [ "$(cat "/proc/$xpid/comm" 2>/dev/null)" != sleep ] ||
      { [ -n "$ypid" ] && [ "$(cat "/proc/$ypid/comm" 2>/dev/null)" != sleep ]; }; } &&
      [ "$i" -lt 50 ]; do
      sleep 0.02; i=$((i + 1))
    done
  fi
  exec 4>&1
  rc=$( { { "$@" 3>&- 4>&-; echo $? >&3; } | cat >&4; } 3>&1 )
  exec 4>&-
  if [ -n "$xpid" ]; then
    kill "$xpid" $ypid 2>/dev/null; wait "$xpid" $ypid 2>/dev/null
  fi
  if [ -n "$vpid" ]; then  # its group: its witnesses, even one forked before setpriv
    kill -KILL "-$vpid" 2>/dev/null; wait "$vpid" 2>/dev/null  # set its death signal
  fi
  if [ -n "$wpid" ]; then
    kill "$wpid" 2>/dev/null; wait "$wpid" 2>/dev/null
  fi
  LC_ALL=C; export LC_ALL
  if [ -n "$cpid" ]; then
    if log=$(canary_log "$cpid" "$clog" 2>/dev/null </dev/null); then
      ev="canary ok ${#log}
$log
"
    else
      ev="canary dead 0

"
    fi
  fi
  if [ -n "$pf" ]; then
    acted=$(cat "$pf"); rm -f "$pf"
    ev="${ev}phases ${#acted}
$acted
"
  fi
  if [ -n "$root" ]; then
    ev="${ev}fs
$(fs_inspect "$root" "$tag" "$granted" 2>/dev/null </dev/null)
"
  fi
fi
printf '\n%s evidence\n%s%s %s %s\n' "$marker" "$ev" "$marker" "$rc" "${#ev}"
exit "$rc"
