# mq_rm GLOB: remove the POSIX message queues named GLOB (a queue outlives the
# process that made it). They are files only where the queue file system is
# mounted: systemd mounts it at /dev/mqueue; elsewhere, in a mount namespace of
# our own (root, as everything that cleans up here).
mq_rm() {
  if [ -d /dev/mqueue ] && grep -q " /dev/mqueue mqueue " /proc/mounts 2>/dev/null; then
    rm -f -- /dev/mqueue/$1
  elif command -v unshare >/dev/null 2>&1; then
    unshare -m sh -c 'd=$(mktemp -d) && mount -t mqueue none "$d" && rm -f -- "$d"/$1
      umount "$d"; rmdir "$d"' sh "$1" 2>/dev/null
  fi
  return 0
}
