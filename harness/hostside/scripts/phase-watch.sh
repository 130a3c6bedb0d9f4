# phase_watch BARRIERS PHASES LIMIT: BARRIERS the barrier folder, PHASES the
# phases (one `NAME<TAB>HOOK` line each), LIMIT each hook's time limit (seconds). For
# each, in order: wait for the probe's barrier file, run the hook (its process group
# killed at the limit), report its status and output (before the release: the
# envelope may kill this loop as soon as the sandbox ends), release the barrier. A
# phase with no hook (nobody to act on) is released at once with "idle" in its go
# file (written aside, then renamed into place), so that the probe does not wait
# for an effect that cannot come (revoke-held's bound).
# No pipeline: the loop must be this one process, which the envelope kills when the
# sandbox has ended. @PHASE_POLL@ (seconds between looks for a barrier file) and
# @NO_ACTION@ (the word the judge reads for a phase nobody acts on) are harness's
# constants, filled in when the file is read (`envelope.py`).
phase_watch() {
  while IFS='	' read -r name hook; do
    [ -n "$name" ] || continue
    while [ ! -e "$1/.harness-phase-$name" ]; do sleep @PHASE_POLL@; done
    if [ -z "$hook" ]; then
      printf '%s\t0\t0\t%s\n' "$name" '@NO_ACTION@'
      printf 'idle\n' >"$1/.harness-wait-$name" &&
        mv -f "$1/.harness-wait-$name" "$1/.harness-go-$name"
      continue
    fi
    t0=$(date +%s%N)
    said=$(timeout -k 1 "$3" sh -c "$hook" 2>&1 </dev/null); st=$?
    t1=$(date +%s%N)
    # 137: it ignored the TERM and was killed a second later (-k): its limit too
    if [ "$st" -eq 137 ] && [ $(( (t1 - t0) / 1000000 )) -ge \
      "$(awk -v s="$3" 'BEGIN { print int(s * 1000) }' 2>/dev/null)" ] 2>/dev/null; then st=124; fi
    [ "$st" -ne 124 ] || said="timed out after $3 s${said:+: $said}"
    said=$(printf '%s' "$said" | tr '\t\n' '  ' | cut -c1-300)
    printf '%s\t%s\t%s\t%s\n' "$name" "$st" "$(( (t1 - t0) / 1000000 ))" "$said"
    : >"$1/.harness-go-$name"
  done <<EOF_PHASES
$2
EOF_PHASES
}
