"""The catalogue of the kernel's surface that harness judges (docs/attack-surface.md):
every way a workload can read or change a file it was not granted, gain privilege,
or put bytes on the network, each row naming the checks that attempt it or why
harness cannot see it. `tests/catalogue/` holds it complete against the kernel's
syscall table and against the scenario modules' checks."""
