#!/bin/sh
# bwrap-second-proc-rw's exact argv, `set` (static) in place of the probe: a host sysctl
# (a harmless one) changed from inside, then restored from the host.
B=$(cat /proc/sys/kernel/printk_ratelimit_burst); echo "host before: printk_ratelimit_burst=$B"
bwrap --unshare-net --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup \
  --die-with-parent --new-session --cap-drop ALL --cap-add CAP_SETUID --cap-add CAP_SETGID \
  --ro-bind /tmp/rt-proc/set /probe --bind /tmp/rt-proc/allowed /allowed --ro-bind /tmp/rt-proc/helpers /helpers \
  --proc /proc --remount-ro /proc --proc /run/proc --dev /dev --tmpfs /tmp \
  -- /probe /run/proc/sys/kernel/printk_ratelimit_burst 11
echo "host after: $(cat /proc/sys/kernel/printk_ratelimit_burst)"
echo "$B" > /proc/sys/kernel/printk_ratelimit_burst; echo "restored: $(cat /proc/sys/kernel/printk_ratelimit_burst)"
