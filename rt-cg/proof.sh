#!/bin/sh
# A scratch host cgroup of our own, outside the sandbox; the mutant's argv with `set`
# as the probe writes its pids.max through the re-homed bind; the host sees the change.
mkdir /sys/fs/cgroup/pids/rt-cg-test
echo "host before: $(cat /sys/fs/cgroup/pids/rt-cg-test/pids.max)"
bwrap --unshare-net --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup \
  --die-with-parent --new-session --cap-drop ALL --cap-add CAP_SETUID --cap-add CAP_SETGID \
  --ro-bind /tmp/rt-cg/set /probe --bind /tmp/rt-cg/allowed /allowed --ro-bind /tmp/rt-cg/helpers /helpers \
  --ro-bind /sys /sys --bind /sys/fs/cgroup/pids /run/pids \
  --proc /proc --remount-ro /proc --dev /dev --tmpfs /tmp \
  -- /probe /run/pids/rt-cg-test/pids.max 7
echo "host after:  $(cat /sys/fs/cgroup/pids/rt-cg-test/pids.max)"
rmdir /sys/fs/cgroup/pids/rt-cg-test && echo "scratch cgroup removed"
