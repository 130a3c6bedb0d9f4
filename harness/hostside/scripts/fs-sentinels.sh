# Shell functions, shared by the standalone inspection (`filesystem.INSPECT`) and
# by the cell's envelope (envelope.sh), which runs them around the sandbox command.
# Both are subshells: umask and cd stay inside; each step fails explicitly (`set -e`
# is ignored where a caller tests the status). Few processes: modes come from the
# umask, and one sha256sum covers every file.
# fs_state PREFIX FILE...: what the host sees of each file (below).
# fs_setup ROOT TOKEN ORIGINAL SKIP PROBE GRANTED GTOKEN: make the fixture; fails if
# ROOT already exists; SKIP: newline-separated places where no sentinel is made (the
# policy grants them); PROBE: the staged probe, copied outside as the file
# fs-exec-outside runs ('' for none); GRANTED: newline-separated host folders (the
# policy's read-only grants) where a folder of harness's own is made, GTOKEN its
# file's token.
# fs_inspect ROOT TAG GRANTED: report what changed outside, then remove everything.
# Other host places get a sentinel too (/tmp, /var/tmp, the work folder), each
# named after the cell so that it never meets an existing file.
fs_state() {
  # What the host sees of each file named: type and mode, size, owner, group, inode,
  # links, mtime, ctime (atime is left out: a read may change it), as `$1:NAME=...`
  # lines, then its user.* extended attributes (`xattr-$1:NAME:ATTR=HEX`) if getfattr
  # is there. Never opens a file, so a FIFO in a sentinel's place cannot hang it.
  p=$1; shift
  [ $# -gt 0 ] || return 0
  stat -c "$p:%n=%f %s %u %g %i %h %.9Y %.9Z" -- "$@" 2>/dev/null
  if command -v getfattr >/dev/null 2>&1; then
    getfattr -h -d -m '^user\.' -e hex --absolute-names -- "$@" 2>/dev/null |
      while IFS= read -r l; do
        case $l in
          "# file: "*) f=${l#"# file: "};;
          user.*) printf 'xattr-%s:%s:%s\n' "$p" "$f" "$l";;
        esac
      done
  else
    echo xattrs=unavailable
  fi
}
fs_setup() (
  root=$1; token=$2; original=$3; skip=$4; probe=${5:-}; granted=${6:-}; gtoken=${7:-}
  [ -d "${root%/*}" ] || mkdir -p "${root%/*}" || exit 1
  umask 022
  mkdir "$root" || exit 1
  # From here on, a failure removes what this call made (and only that).
  set --
  made=
  fail() {
    rm -rf "$root"; rm -f -- "$@"
    printf '%s' "$made" | while IFS= read -r g; do rm -rf -- "$g"; done
    exit 1
  }
  # One fresh file (or folder) per kind of write an attempt makes, each its own
  # check's target (OWN below), all writable by anyone: only the sandbox stops them.
  if ! { mkdir -m 0777 "$root/allowed" "$root/outside" &&
    printf '%s' "$token" > "$root/outside/sentinel" &&
    umask 0 &&
    for f in overwrite-me rename-me truncate-me unlink-me chmod-me chown-me utime-me xattr-me \
      uring-me chattr-me; do
      printf '%s' "$original" > "$root/outside/$f" || fail
    done &&
    mkdir "$root/outside/rmdir-me" &&
    { [ -z "$probe" ] ||
      { cp -- "$probe" "$root/outside/exec-me" && chmod 0755 "$root/outside/exec-me"; }; } &&
    : > "$root/outside/listed-$token" &&
    ln -s "$root/outside/sentinel" "$root/allowed/planted-link"; }; then
    fail
  fi
  if command -v setfattr >/dev/null 2>&1; then
    setfattr -n user.harness -v original "$root/outside/xattr-me" 2>/dev/null
  fi
  umask 022
  # noclobber: an existing file of that name is never written (setup fails instead).
  n=harness-sentinel-${root##*/}
  for f in "/tmp/$n" "/var/tmp/$n" "${root%/fs/*}/$n"; do
    case "
$skip
" in *"
$f
"*) continue;; esac
    (set -C; printf '%s' "$token" > "$f") || fail "$@"
    set -- "$@" "$f"
  done
  # In each read-only grant, a folder of harness's own (mkdir never takes an existing
  # one) with files writable by anyone, as outside: only the sandbox stops a change.
  # No existing host file is touched; fs_inspect compares and removes the folder.
  rn=harness-ro-${root##*/}
  while IFS= read -r d; do
    [ -n "$d" ] || continue
    g=$d/$rn
    mkdir -m 0777 "$g" || fail "$@"
    made="$made$g
"
    (umask 0 && printf '%s' "$gtoken" > "$g/sentinel" &&
      for f in overwrite-me truncate-me unlink-me chmod-me chown-me utime-me xattr-me chattr-me; do
        printf '%s' "$original" > "$g/$f" || exit 1
      done) || fail "$@"
    if command -v setfattr >/dev/null 2>&1; then
      setfattr -n user.harness -v original "$g/xattr-me" 2>/dev/null
    fi
    set -- "$@" "$g/sentinel" "$g/overwrite-me" "$g/truncate-me" "$g/unlink-me" \
      "$g/chmod-me" "$g/chown-me" "$g/utime-me" "$g/xattr-me" "$g/chattr-me"
  done <<EOF_GRANTED
$granted
EOF_GRANTED
  # What every file outside is now, for fs_inspect to compare with.
  (cd "$root" && fs_state before outside/* "$@" > before) || fail "$@"
  # A decoy: a host process owned by an unprivileged uid, whose /proc/<pid>/root
  # is the host's root to any sandbox that sees the host's processes, and which
  # holds the sentinel open on its fd 3 (another process's descriptor, fs-proc-fds).
  # Bounded by its own sleep; stopped by fs_inspect. Without setpriv there is none.
  if command -v setpriv >/dev/null 2>&1; then
    setpriv --reuid=65534 --regid=65534 --clear-groups sleep 120 </dev/null >/dev/null 2>&1 \
      3<"$root/outside/sentinel" &
    echo $! > "$root/decoy.pid"
  fi
  :
)
fs_inspect() (
  root=$1; tag=$2; granted=$3
  n=harness-sentinel-${root##*/}; rn=harness-ro-${root##*/}
  cd "$root" || exit 0
  if [ -f decoy.pid ] && [ ! -L decoy.pid ]; then
    # As the decoy's uid: whatever the sandbox wrote there, only such a process dies.
    read -r decoy < decoy.pid && case $decoy in
      *[!0-9]*|'') ;;
      *) setpriv --reuid=65534 --regid=65534 --clear-groups kill "$decoy" 2>/dev/null;;
    esac
  fi
  # The state fs_setup saw, then what is there now: every file it made outside and
  # each other host place's sentinel (compared by Sentinels.inspection).
  known=
  if [ -f before ] && [ ! -L before ]; then
    while IFS= read -r l; do printf '%s\n' "$l"; known="$known
${l%%=*}"; done < before
  fi
  set --
  for f in outside/* outside/.[!.]* outside/..?* "/tmp/$n" "/var/tmp/$n" "${root%/fs/*}/$n"; do
    if [ -e "$f" ] || [ -L "$f" ]; then set -- "$@" "$f"; fi
  done
  # Every name in harness's folder in each read-only grant (the folder itself gone
  # or replaced, its files are missing): any it did not make is a change.
  gextra=0
  while IFS= read -r d; do
    [ -n "$d" ] || continue
    for f in "$d/$rn"/* "$d/$rn"/.[!.]* "$d/$rn"/..?*; do
      if [ -e "$f" ] || [ -L "$f" ]; then
        set -- "$@" "$f"
        case "$known
" in *"
before:$f
"*) ;; *) gextra=$((gextra + 1));; esac
      fi
    done
  done <<EOF_GRANTED
$granted
EOF_GRANTED
  echo "granted_extra=$gextra"
  fs_state after "$@"
  # Names outside that fs_setup did not make and no attempt is named after.
  extra=0
  for f in "$@"; do
    case $f in
      /*|"outside/created-$tag"|"outside/dir-$tag"|"outside/symlink-$tag") ;;
      "outside/fifo-$tag"|"outside/sock-$tag") ;;
      *) case "$known
" in *"
before:$f
"*) ;; *) extra=$((extra + 1));; esac;;
    esac
  done
  echo "extra=$extra"
  # Regular files only, never through a symlink: a FIFO, a device or a link to a
  # blocking file put in a sentinel's place must not hang the read (it counts as
  # missing: for the sentinels an escape, for the control not proof of anything).
  set --
  for f in outside/sentinel outside/overwrite-me outside/truncate-me "allowed/control-$tag" \
    "/tmp/$n" "/var/tmp/$n" "${root%/fs/*}/$n"; do
    if [ -f "$f" ] && [ ! -L "$f" ]; then set -- "$@" "$f"; fi
  done
  while IFS= read -r d; do
    [ -n "$d" ] || continue
    for f in "$d/$rn/sentinel" "$d/$rn/overwrite-me" "$d/$rn/truncate-me"; do
      if [ -f "$f" ] && [ ! -L "$f" ]; then set -- "$@" "$f"; fi
    done
  done <<EOF_GRANTED
$granted
EOF_GRANTED
  if [ $# -gt 0 ]; then sha256sum -- "$@" 2>/dev/null; fi
  rm -f "/tmp/$n" "/var/tmp/$n" "${root%/fs/*}/$n"
  # Only the name fs_setup made, never through a symlink put in its place.
  while IFS= read -r d; do
    if [ -n "$d" ]; then rm -rf -- "$d/$rn"; fi
  done <<EOF_GRANTED
$granted
EOF_GRANTED
  # Anything at created-TAG (dir-TAG, ...) was made from inside; rename-me counts as
  # still there only as the regular file the fixture made.
  for k in created dir symlink fifo sock; do
    f=outside/$k-$tag
    if [ -e "$f" ] || [ -L "$f" ]; then echo "$k=yes"; else echo "$k=no"; fi
  done
  f=outside/rename-me
  if [ -f "$f" ] && [ ! -L "$f" ]; then echo rename_source=yes; else echo rename_source=no; fi
  echo inspected=yes
  cd / && rm -rf "$root"
)
