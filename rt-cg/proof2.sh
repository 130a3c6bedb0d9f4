#!/bin/sh
# bwrap-cgroup-at-run's exact argv, `set` in place of the probe: a scratch host cgroup
# of our own has its pids.max changed from inside.
mkdir /sys/fs/cgroup/pids/rt-cg-test
echo "host before: $(cat /sys/fs/cgroup/pids/rt-cg-test/pids.max)"
bwrap --unshare-net --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup \
  --die-with-parent --new-session --cap-drop ALL --cap-add CAP_SETUID --cap-add CAP_SETGID \
  --ro-bind /tmp/rt-cg/set /probe --bind /tmp/rt-cg/allowed /allowed --ro-bind /tmp/rt-cg/helpers /helpers \
  --bind /sys/fs/cgroup/pids /run/pids \
  --proc /proc --remount-ro /proc --dev /dev --tmpfs /tmp \
  -- /probe /run/pids/rt-cg-test/pids.max 7
echo "host after:  $(cat /sys/fs/cgroup/pids/rt-cg-test/pids.max)"
rmdir /sys/fs/cgroup/pids/rt-cg-test && echo "scratch cgroup removed"
