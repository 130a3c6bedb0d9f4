# $1 ns, $2 host veth, $3 outside veth, $4 log, $5 leases folder, $6 the IPv4
# addresses asked for, "CANARY,HOST" ('' for the lease's); $7-$10 the IPv4 walk:
# the range's network (an integer), its /30s, the first one tried, the step; $11-$15
# the IPv6 walk: the range's top 64 bits (two 32-bit halves), its /64s, the first,
# the step; $16 how many to try; $17 the run's high port; $18 the metadata addresses
# the canary also takes, "M4,M6" ('' for none); $19 and $20 its stand-ins elsewhere,
# IPv4 and IPv6 ("A,B,..."), $21 the host's own it takes too ("gateway resolvers": its
# default gateways, its resolv.conf's servers); then the canary's argv, where @A4@ and
# @A6@ stand for the canary's addresses, @H4@ and @H6@ for the host's end of the veth
# (its listeners there are bound before it moves), and @E@ for a TCP and a UDP
# listener on the high port at each stand-in taken (and on 443 and 80 at those of $19 and $20:
# never at the host's own gateways and resolvers, whose real services keep their ports). Subnets are leased per host, under a
# lock, each family on its own: a walk from a random subnet of the range by a random
# odd step (the count is a power of two, so it visits every one), taking the first
# whose lease (named after the subnet) names no namespace with a process in it (the
# canary) and whose addresses no interface holds (an older harness, anything else
# in the range). A dead run's lease is thus free again, and its leftover veth, if
# any, still keeps its addresses from being handed out twice; the lease is written
# and the addresses are on the host's end before the lock is let go.
# One `ip` process makes the namespace; one batch makes the veth pair and sets up
# the host's end (in the batch, `netns add` would move the later commands into the
# new namespace with an iproute2 older than 5.2). The canary enters the namespace
# and sets up the other end itself (lo, addresses, default routes for replies to
# sandboxes whose own namespaces are routed through the host). The outside end is
# made inside the namespace: moving a device there afterwards waits out an RCU
# grace period under the kernel's network lock (slow, and serial). Names come from
# harness (hex run ids); addresses are computed here from the walk.
# The metadata addresses (a cloud's 169.254.169.254 and fd00:ec2::254) are the
# canary's too, on its lo, for the run's high port alone: a rule sends that port to
# them into the lease's own routing table, whose route leads to the canary; any
# other port to them (a real metadata service's 80) is routed as it was. Each stand-in
# elsewhere is taken the same way, one rule a port (the high port; 443 and 80 too for those
# picked from ranges); one the host holds itself (its own
# address: the local table answers first), a loopback or an IPv6 link-local one, or one
# whose rule the host refuses is left out, with a message.
# Needs host-stand-ins.sh before it.
set -eu
ns=$1; hv=$2; cv=$3; log=$4; leases=$5; want4=$6; base4=$7; n4=$8; i4=$9; step4=${10}
hi6=${11}; lo6=${12}; n6=${13}; i6=${14}; step6=${15}; tries=${16}; high=${17}; meta=${18}
want_e4=${19}; want_e6=${20}; words=${21}
shift 21
taken() {
  [ -e "$leases/$1" ] && [ -n "$(ip netns pids "$(cat "$leases/$1")" 2>/dev/null)" ]
}
mkdir -p "$leases"
exec 9>"$leases/lock"
flock -w 20 9
k=0
while :; do
  if [ "$k" -ge "$tries" ] || [ "$k" -ge "$n4" ]; then
    echo "no free canary subnet in the IPv4 range (tried $k)" >&2; exit 1
  fi
  a=$((base4 + i4 * 4)); i4=$(((i4 + step4) % n4)); k=$((k + 1))
  p4=$((a >> 24 & 255)).$((a >> 16 & 255)).$((a >> 8 & 255)); o=$((a & 255))
  net4=$p4.$o; h4=$p4.$((o + 1)); c4=$p4.$((o + 2))
  if [ -n "$want4" ]; then c4=${want4%,*}; h4=${want4#*,}; fi
  if taken "$net4" || [ -n "$(ip -o addr show to "$h4/30")" ]; then continue; fi
  break
done
k=0
while :; do
  if [ "$k" -ge "$tries" ] || [ "$k" -ge "$n6" ]; then
    echo "no free canary subnet in the IPv6 range (tried $k)" >&2; exit 1
  fi
  hi=$((hi6 | i6 >> 32)); lo=$((lo6 | (i6 & 4294967295))); i6=$(((i6 + step6) % n6))
  k=$((k + 1))
  net6=$(printf %x:%x:%x:%x $((hi >> 16)) $((hi & 65535)) $((lo >> 16)) $((lo & 65535)))::
  h6=${net6}1; c6=${net6}2
  if taken "$net6" || [ -n "$(ip -o addr show to "$net6/64")" ]; then continue; fi
  break
done
printf '%s\n' "$ns" > "$leases/$net4"
printf '%s\n' "$ns" > "$leases/$net6"
ip netns add "$ns"
printf '%s\n' "link add $hv type veth peer name $cv netns $ns" "addr add $h4/30 dev $hv" \
  "addr add $h6/64 dev $hv nodad" "link set $hv up" | ip -batch -
# Nothing the canary sends leaves the host: what comes in from its veth is routed by
# the main table's routes but its default ones (a sandbox's link, a bridge), else
# dropped (its answers to a sandbox gone, whose veth went with it, would take the
# default route out).
for f in -4 -6; do
  if ! { ip "$f" rule add prio 91 iif "$hv" lookup main suppress_prefixlength 0 &&
    ip "$f" rule add prio 92 iif "$hv" blackhole; } 2>/dev/null; then
    ip "$f" rule del prio 91 iif "$hv" 2>/dev/null || true  # never half of the pair
    echo "canary: its answers are not kept on the host (ip $f rule refused)" >&2
  fi
done
m4=''; m6=''; t=$((0x10000000 | (a >> 2 & 0x0fffffff)))
rules_del() { # the lease table's rules (a dead run's, or a start that failed): at most 64
  for f in -4 -6; do
    i=0; while [ "$i" -lt 64 ] && ip "$f" rule del lookup "$t" 2>/dev/null; do i=$((i + 1)); done
  done
}
meta_up() { # a kernel or iproute2 without port rules: no metadata lines, nothing else lost
  rules_del
  printf '%s\n' "addr add 127.0.0.1/8 dev lo" "addr add $m4/32 dev lo" \
    "addr add $m6/128 dev lo nodad" | ip -n "$ns" -batch - &&
    ip route add "$m4/32" via "$c4" dev "$hv" table "$t" &&
    ip -6 route add "$m6/128" via "$c6" dev "$hv" table "$t" &&
    ip rule add prio 90 to "$m4" dport "$high" lookup "$t" &&
    ip -6 rule add prio 90 to "$m6" dport "$high" lookup "$t"
}
if [ -n "$meta" ]; then
  m4=${meta%,*}; m6=${meta#*,}
  if ! meta_up >&2; then
    echo "canary: no metadata addresses (port rules refused)" >&2
    rules_del; m4=''; m6=''
  fi
fi
exec 9>&-
e4=''; e6=''; o4=''; o6=''; lo_up=''
stand_in() { # $1 an address: the canary's too, for the high port, and 443 and 80 where $2 says so
  x=$1; ports="$high${2:+ 443 80}"
  case ",$e4,$e6,$o4,$o6,$m4,$m6,$c4,$c6,$h4,$h6," in *",$x,"*) return 0 ;; esac
  case $x in
    ''|127.*|::1|[fF][eE][89aAbB]?:*) return 0 ;;
    *:*) f=-6; via=$c6; plen=128; nodad=nodad ;;
    *) f=-4; via=$c4; plen=32; nodad='' ;;
  esac
  if [ -n "$(ip -o addr show to "$x/$plen" 2>/dev/null)" ]; then
    echo "canary: not at $x (the host's own address)" >&2; return 0
  fi
  if [ -z "$lo_up$m4" ]; then
    ip -n "$ns" addr add 127.0.0.1/8 dev lo 2>/dev/null || true; lo_up=1
  fi
  ok=1
  { ip -n "$ns" addr add "$x/$plen" dev lo $nodad &&
    ip "$f" route add "$x/$plen" via "$via" dev "$hv" table "$t"; } 2>/dev/null || ok=''
  for port in $ports; do
    [ -z "$ok" ] || ip "$f" rule add prio 90 to "$x" dport "$port" lookup "$t" 2>/dev/null || ok=''
  done
  if [ -z "$ok" ]; then
    for port in $ports; do
      ip "$f" rule del prio 90 to "$x" dport "$port" lookup "$t" 2>/dev/null || true
    done
    ip "$f" route del "$x/$plen" table "$t" 2>/dev/null || true
    echo "canary: not at $x (refused)" >&2
  elif [ -n "${2:-}" ] && [ "$f" = -6 ]; then e6=${e6:+$e6,}$x
  elif [ -n "${2:-}" ]; then e4=${e4:+$e4,}$x
  elif [ "$f" = -6 ]; then o6=${o6:+$o6,}$x
  else o4=${o4:+$o4,}$x
  fi
}
if [ -z "$m4" ] && [ -n "$want_e4$want_e6$words" ]; then rules_del; fi
for x in $(printf '%s\n' "$want_e4" "$want_e6" | tr , '\n'); do stand_in "$x" web; done
for x in $(host_own "$words" | head -n 8); do stand_in "$x"; done # 8 at most (probe attempts)
echo "subnet=$net4/30 subnet6=$net6/64 addr4=$c4 addr6=$c6 host4=$h4 host6=$h6${m4:+ meta4=$m4 meta6=$m6}${e4:+ else4=$e4}${e6:+ else6=$e6}${o4:+ own4=$o4}${o6:+ own6=$o6}"
for arg; do
  shift
  if [ "$arg" = @E@ ]; then
    for x in $(printf '%s\n' "$e4" "$e6" "$o4" "$o6" | tr , '\n'); do
      case ",$e4,$e6," in *",$x,"*) ports="$high 443 80" ;; *) ports=$high ;; esac
      case $x in *:*) x="[$x]" ;; esac
      for port in $ports; do set -- "$@" --sweep-tcp "$x:$port" --sweep-udp "$x:$port"; done
    done
    continue
  fi
  case $arg in
    *@A4@*) arg=${arg%%@A4@*}$c4${arg#*@A4@} ;;
    *@A6@*) arg=${arg%%@A6@*}$c6${arg#*@A6@} ;;
    *@H4@*) arg=${arg%%@H4@*}$h4${arg#*@H4@} ;;
    *@H6@*) arg=${arg%%@H6@*}$h6${arg#*@H6@} ;;
  esac
  set -- "$@" "$arg"
done
exec "$@" --netns "/run/netns/$ns" --iface "$cv" --iface-addr "$c4/30" --gateway "$h4" \
  --iface-addr6 "$c6/64" --gateway6 "$h6" --capture --daemon "$log"
