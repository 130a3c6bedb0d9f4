# clean_meta_rules: the canary's rules for its stand-ins (the metadata addresses and
# those elsewhere; priority 90, a lease table 0x1nnnnnnn) whose table is empty: their
# canary's veth is gone (a run killed before canary-down), and a live canary's table
# always holds its route (added before its rules). At most 64 per family.
clean_meta_rules() {
  for f in -4 -6; do
    for t in $(ip "$f" rule show 2>/dev/null | sed -n 's/^90:.* lookup \([0-9][0-9]*\).*/\1/p' | sort -u); do
      [ $((t >> 28)) -eq 1 ] || continue
      [ -z "$(ip "$f" route show table "$t" 2>/dev/null)" ] || continue
      i=0; while [ "$i" -lt 64 ] && ip "$f" rule del prio 90 lookup "$t" 2>/dev/null; do i=$((i + 1)); done
    done
  done
}
# clean_iif_rules PREFIX: the canary's rules that keep what its veth sends on the host
# (priority 91 and 92, iif its host-side veth), for every veth whose name starts with
# PREFIX ('' for none), whether the veth is there or gone. At most 64 per family.
clean_iif_rules() {
  [ -n "$1" ] || return 0
  for f in -4 -6; do
    for r in $(ip "$f" rule show 2>/dev/null |
      sed -n "s/^\(9[12]\):.* iif \($1[0-9a-f]*\)[ \t].*/\1,\2/p; s/^\(9[12]\):.* iif \($1[0-9a-f]*\)$/\1,\2/p" |
      sort -u | head -n 64); do
      ip "$f" rule del prio "${r%,*}" iif "${r#*,}" 2>/dev/null || true
    done
  done
}
