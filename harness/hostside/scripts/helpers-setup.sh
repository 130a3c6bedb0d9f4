# $1 probe, $2 probe hash, $3 top folder (empty: /var/tmp/harness-helpers-UID).
# The helpers must be executable by an unprivileged uid, so they live outside the
# (often 0700) home, in a world-traversable folder. `mv -T` is one rename(2): it
# fails if another run's folder is already in place, and then that one is used.
# Folders are named h-HASH: one made in place by an older harness (HASH alone) is
# never taken for a staged one.
set -u
probe=$1; top=${3:-/var/tmp/harness-helpers-$(id -u)}; dir=$top/h-$2
mkdir -p "$top" || exit 1
# Ours, or nothing: in /var/tmp any local user may have made it first (or a link of
# that name), and root's chmod would not take it back: its owner could stage forged
# helpers in it (false verdicts), or programs that cells run as root (`other`).
for d in "$top" "$dir"; do
  if [ -L "$d" ] || { [ -e "$d" ] && [ ! -O "$d" ]; }; then
    echo "harness-helpers: $d is not a folder of uid $(id -u)'s own; remove it" >&2; exit 1
  fi
done
chmod 0755 "$top" || exit 1
if [ ! -f "$dir/.ready" ]; then
  tmp=$(mktemp -d "$top/.stage-$2.XXXXXX") || exit 1
  chmod 0755 "$tmp" || exit 1
  if cp "$probe" "$tmp/setuid" && chown 0:0 "$tmp/setuid" && chmod 4755 "$tmp/setuid"; then
    s=ok
  else
    s=failed
  fi
  if cp "$probe" "$tmp/setgid" && chown 0:0 "$tmp/setgid" && chmod 2755 "$tmp/setgid"; then
    g=ok
  else
    g=failed
  fi
  cp "$probe" "$tmp/fcap" && chmod 0755 "$tmp/fcap" || exit 1
  # Another program: the probe with bytes appended (another name, another sha256),
  # for the attempt a network policy's binaries must refuse.
  { cp "$probe" "$tmp/other" && printf '\nharness: another binary\n' >> "$tmp/other" &&
    chmod 0755 "$tmp/other"; } || exit 1
  if command -v setcap >/dev/null 2>&1 && setcap cap_net_raw+ep "$tmp/fcap" 2>/dev/null; then
    f=ok
  else
    f=failed
  fi
  # Every capability inheritable and effective: what runs it gets the inheritable set
  # of whoever runs it, which an unprivileged uid's should leave empty.
  cp "$probe" "$tmp/inh" && chmod 0755 "$tmp/inh" || exit 1
  if command -v setcap >/dev/null 2>&1 && setcap =ei "$tmp/inh" 2>/dev/null; then
    i=ok
  else
    i=failed
  fi
  printf 'setuid=%s\nsetgid=%s\nfcap=%s\ninh=%s\n' "$s" "$g" "$f" "$i" > "$tmp/.ready" || exit 1
  chmod 0444 "$tmp/.ready" || exit 1
  mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
fi
echo "dir=$dir"
cat "$dir/.ready" || exit 1
# What a decision record about `other` must name (a folder staged before it said none).
sum=$(sha256sum "$dir/other" 2>/dev/null) && echo "other_sha256=${sum%% *}"
exit 0
