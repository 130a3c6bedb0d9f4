# No arguments. The host's own unix listeners, as its network namespace sees them
# (/proc/net/unix): first a line "ns NET PID MNT BOOT RELEASE" (the host's namespace
# inodes, its boot id and kernel release: the namespaces are compared only on the
# host's own kernel, where initial namespaces' inodes are constants), a
# line "devs MAJ:MIN,..." (the filesystems the host has mounted that hold files of
# its own: no kernel views, no container's overlay but the host's root), then one
# line per listener, "T DEV:INO PID COMM FSPATH NAME": T is s (stream), q
# (seqpacket) or d (a datagram socket bound to a path); DEV:INO the socket file's
# (0:0 for an abstract name or a file the host cannot stat); PID and COMM the first
# process holding it (0 and - when none is readable); FSPATH the file's path within
# its filesystem (where a bind mount of any folder above it shows it; - if unknown);
# NAME the path, or @ and the abstract name. Names with spaces or control characters are left out (the probe's
# option is one line per listener).
ns() { readlink "/proc/self/ns/$1" 2>/dev/null | tr -cd 0-9; }
echo "ns $(ns net) $(ns pid) $(ns mnt) $(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo -) $(uname -r)"
echo "devs $(awk '{
  for (i = 7; i <= NF && $i != "-"; i++) ;
  t = $(i + 1)
  if (t ~ /^(proc|sysfs|cgroup2?|devpts|nsfs|bpf|tracefs|debugfs|securityfs|mqueue|fusectl|configfs|pstore|autofs|binfmt_misc|hugetlbfs|efivarfs|selinuxfs)$/) next
  if (t == "overlay" && $5 != "/") next
  if (!seen[$3]++) printf "%s%s", n++ ? "," : "", $3
}' /proc/self/mountinfo)"
# Which process holds each socket inode: the first descriptor linking to it.
owners=$(find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 -lname 'socket:*' -printf '%h %l\n' \
  2>/dev/null | sed -n 's|^/proc/\([0-9]*\)/fd socket:\[\([0-9]*\)\]$|\2 \1|p' | sort -u -k1,1)
awk 'NR > 1 && NF == 8 && $8 !~ /[[:space:][:cntrl:]]/ {
  if ($4 == "00010000" && $5 == "0001") k = "s"
  else if ($4 == "00010000" && $5 == "0005") k = "q"
  else if ($5 == "0002" && substr($8, 1, 1) == "/") k = "d"
  else next
  print $7, k, $8
}' /proc/net/unix | sort -u -k3,3 | while read -r ino kind name; do
  pid=$(printf '%s\n' "$owners" | awk -v i="$ino" '$1 == i { print $2; exit }')
  comm=-
  # Its name as one word: no newline (a process may put one in), no space.
  [ -n "$pid" ] && comm=$(tr -d '\n' <"/proc/$pid/comm" 2>/dev/null | tr -c 'A-Za-z0-9._:-' _)
  id=0:0 fspath=-
  case $name in
    /*) s=$(stat -L -c '%F|%d:%i|%m' -- "$name" 2>/dev/null) && case $s in
      "socket|"*)
        s=${s#socket|} id=${s%%|*} mp=${s#*|}
        # The last mount at its mount point is the one on top.
        root=$(awk -v m="$mp" '$5 == m { r = $4 } END { print r }' /proc/self/mountinfo)
        case $root in
          /*) rest=${name#"$mp"}; [ "$mp" = / ] && rest=$name; fspath=${root%/}$rest;;
        esac;;
    esac;;
  esac
  echo "$kind $id ${pid:-0} ${comm:--} $fspath $name"
done
# The host's TCP listeners (/proc/net/tcp and tcp6, state 0A), "t ADDR:PORT PID COMM
# PARENT ARG1" as the table prints the address (hex): PARENT the holder's parent's
# command (an SSH daemon's own listener is held by the daemon, a forwarded port by a
# session under it), ARG1 its first argument (a harness canary's is "canary"); - where
# unknown. A sandbox in the host's network namespace reaches every one of them.
# And its UDP sockets bound and not connected (state 07, no peer), "u ADDR:PORT ...":
# a datagram shipper (statsd, syslog) takes what it is sent elsewhere.
for f in /proc/net/tcp /proc/net/tcp6 /proc/net/udp /proc/net/udp6; do
  kind=t; case $f in *udp*) kind=u;; esac
  [ -r "$f" ] && awk -v k="$kind" 'NR > 1 && ((k == "t" && $4 == "0A") ||
    (k == "u" && $4 == "07" && $3 ~ /^0+:0000$/)) { print k, $2, $10 }' "$f"
done | sort -u -k1,2 | while read -r kind local ino; do
  pid=$(printf '%s\n' "$owners" | awk -v i="$ino" '$1 == i { print $2; exit }')
  comm=- parent=- arg1=-
  if [ -n "$pid" ]; then
    comm=$(tr -d '\n' <"/proc/$pid/comm" 2>/dev/null | tr -c 'A-Za-z0-9._:-' _)
    ppid=$(sed 's/.*) [A-Za-z] \([0-9]*\) .*/\1/' "/proc/$pid/stat" 2>/dev/null)
    [ -n "$ppid" ] && parent=$(tr -d '\n' <"/proc/$ppid/comm" 2>/dev/null | tr -c 'A-Za-z0-9._:-' _)
    arg1=$(tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | sed -n 2p | tr -c 'A-Za-z0-9._:-' _)
  fi
  echo "$kind $local ${pid:-0} ${comm:--} ${parent:--} ${arg1:--}"
done
