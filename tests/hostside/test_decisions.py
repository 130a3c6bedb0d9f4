"""Which connections the decision records are fetched for, and what `other` hashes to."""

from __future__ import annotations

from harness.hostside.decisions import connections
from harness.probe.protocol import ProbeOutput
from harness.results.records import ProbeCheck

DST = "10.251.0.2:8081"


def _check(check_id: str, evidence: dict[str, object], scenario: str = "attribution") -> ProbeCheck:
    return ProbeCheck(id=check_id, scenario=scenario, kind="control", outcome="ok",
                      evidence=evidence)  # fmt: skip


def test_the_allowed_connection_and_each_of_the_two_binaries() -> None:
    """Every port the attribution checks reported, with its destination; a port not
    reported (the other could not run) is left out; other checks' ports are not asked."""
    output = ProbeOutput(
        checks=[
            _check("tcp-raw-ip", {"src_port": 40999, "dst": DST}, "egress-confinement"),
            _check("attr-allowed-connect", {"src_port": 40112, "dst": DST}),
            _check(
                "attr-two-binaries",
                {
                    "port_1_probe": 40001,
                    "port_3_probe": "40003",
                    "port_4_other": 40004,
                    "binary": "/helpers/other",
                },
            ),
        ]
    )
    assert connections(output) == [(40112, DST), (40001, None), (40003, None), (40004, None)]
    assert connections(ProbeOutput()) == []
