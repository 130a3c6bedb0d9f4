# $@: host folders. Those harness may make a folder in, NUL-terminated: a writable
# folder (not a symlink) on a filesystem that holds ordinary files.
for d; do
  [ -d "$d" ] && [ ! -L "$d" ] && [ -w "$d" ] || continue
  case $(stat -f -c %T -- "$d" 2>/dev/null) in
    ext2/ext3|ext4|xfs|btrfs|tmpfs|f2fs|zfs|overlayfs|jfs|bcachefs) printf '%s\0' "$d";;
  esac
done
