"""Attribution: an allowed connection's decision record names the binary behind it."""

from __future__ import annotations

from harness.scenarios.base import Check, Need, Scenario

ALLOWED_CONNECT = "attr-allowed-connect"
TWO_BINARIES = "attr-two-binaries"
# The connections TWO_BINARIES makes, in order: the evidence key holding each one's
# source port (its marker is the check id, `-N-WHO`), and the binary that made it.
# The fourth is `other` again, passing for the probe (started with its argv[0], named
# as it): a record must name the file a process runs, not what it calls itself.
TWO_BINARIES_CONNECTIONS = (
    ("port_1_probe", "probe"),
    ("port_2_other", "other"),
    ("port_3_probe", "probe"),
    ("port_4_other", "other"),
)


ATTRIBUTION = Scenario(
    name="attribution",
    summary=(
        "the supervisor's record of an allowed connection names the resolved binary; of"
        " connections from two binaries, interleaved, each record names its own"
    ),
    property="attribution",
    # Judged from the decision records, not by attempts (`judge/attribution.py`).
    # The helpers: `other`, the second binary.
    needs=frozenset({Need.CANARY, Need.DECISIONS, Need.HELPERS}),
    checks=(
        Check(
            ALLOWED_CONNECT,
            "connect to the allowed destination",
            inside_control=True,
            how=(
                "Connect, exchange the HARNESS and NONCE lines, and report `evidence.src_port` and "
                "`evidence.dst`."
            ),
        ),
        Check(
            TWO_BINARIES,
            "connect to the allowed destination from the probe, the helpers' `other`, the"
            " probe again and `other` passing for the probe, each with its own marker",
            inside_control=True,
            how=(
                "Four connections to the allowed destination, interleaved: the probe, the "
                "helpers' `other` (run as `other connect TAG MARKER IP:PORT NONCE`), the probe "
                "again, then `other` passing for the probe (started with the probe's argv[0] "
                "and named as it, `PR_SET_NAME`: a record must name the file a process runs, "
                "not what it calls itself). Each sends its own marker, `HARNESS <tag> "
                "attr-two-binaries-N-WHO` (N 1 to 4, WHO `probe` or `other`), and reports its "
                "source port as `evidence.port_N_WHO`; `evidence.dst`, `evidence.binary` (the "
                "other's path). Ok if both of the probe's connections connected (the allowed "
                "destination may be any service); the other's need only be tried (a per-binary "
                "policy refuses them). `other` not given, not run, or printing no connect line: "
                "an error, never ok. The host judges the decision records of the four ports "
                "(docs/judging.md)."
            ),
        ),
    ),
)
