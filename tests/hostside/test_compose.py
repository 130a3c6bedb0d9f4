"""Which fixtures a host gets, and how their hooks combine: from the scenarios'
declared needs, never from their names."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import anyio

from harness.hostside.base import CellSetup, Fixture
from harness.hostside.canary import CanaryFixture
from harness.hostside.compose import HostFixtures, compose, needs_of, targets_of
from harness.hostside.decisions import DecisionsFixture
from harness.hostside.filesystem import SentinelsFixture
from harness.hostside.helpers import HelpersFixture
from harness.hostside.hostfs import HostFsFixture
from harness.hostside.listeners import HostListenersFixture
from harness.hostside.supervisor import SupervisorFixture
from harness.matrix.models import CommandRuntimeSpec, HostRuntimeSpec, OciRuntimeSpec
from harness.runtimes import make_runtime
from harness.scenarios import SCENARIOS
from harness.scenarios.base import PROPERTIES

ROOT = Path(__file__).resolve().parents[2]


def _kinds(fixtures: list[Fixture]) -> list[type[Fixture]]:
    return [type(f) for f in fixtures]


def test_each_scenario_brings_the_fixtures_it_declares() -> None:
    """Egress gets the canary, the helpers (the other binary) and the host's unix
    listeners, filesystem the sentinels, the host's view and the helpers (whose folder
    holds the host's list of its folders), privilege the helpers, attribution the canary, the
    helpers (a second binary) and decision records; mechanisms alone start nothing on
    the host."""
    host = [make_runtime("host", HostRuntimeSpec(kind="host"))]
    expected = {
        "egress-confinement": [CanaryFixture, HelpersFixture, HostListenersFixture],
        "filesystem-confinement": [HelpersFixture, HostFsFixture, SentinelsFixture],
        "privilege-floor": [HelpersFixture, HostFsFixture],
        "attribution": [CanaryFixture, HelpersFixture, DecisionsFixture],
        "mechanisms": [],
    }
    for name, kinds in expected.items():
        assert _kinds(compose(needs_of([SCENARIOS[name]]), host)) == kinds, name
    assert targets_of([SCENARIOS["egress-confinement"], SCENARIOS["attribution"]]) == {
        "egress-confinement"
    }


def test_a_supervised_runtime_adds_its_supervisor_after_the_canary() -> None:
    """The supervisor is the runtime's fixture, not a scenario's, and starts in a
    later stage than the canary whose address its policy allows, waiting for the
    canary alone."""
    spec = OciRuntimeSpec(kind="oci", binary="runc", supervisor="reference")
    runtimes = [make_runtime("guarded", spec)]
    fixtures = HostFixtures(compose(needs_of([SCENARIOS["egress-confinement"]]), runtimes))
    assert [_kinds(stage) for stage in fixtures.stages()] == [
        [CanaryFixture, HelpersFixture, HostListenersFixture],
        [SupervisorFixture],
    ]
    assert _kinds(compose(frozenset(), runtimes)) == [SupervisorFixture]
    supervisors, canary = fixtures.fixtures[-1], fixtures.fixtures[0]
    assert supervisors.waits_for(fixtures.fixtures[:-1]) == [canary]


class _Timed(Fixture):
    """Starts after `delay` seconds and notes when (in `log`)."""

    def __init__(self, name: str, stage: int, delay: float, log: list[str]) -> None:
        self.name, self.delay, self.log = name, delay, log
        self.stage = stage  # type: ignore[misc]

    async def start(self, host: object) -> None:
        self.log.append(f"{self.name} starts")
        await anyio.sleep(self.delay)
        self.log.append(f"{self.name} up")


class _WaitsForFirst(_Timed):
    def __init__(self, first: Fixture, log: list[str]) -> None:
        super().__init__("late", 1, 0.0, log)
        self.first = first

    def waits_for(self, earlier: Sequence[Fixture]) -> Sequence[Fixture]:
        return [f for f in earlier if f is self.first]


def test_a_later_stage_starts_once_what_it_waits_for_is_up() -> None:
    """By default a later stage waits for every earlier fixture; one that names the
    fixtures it uses starts as soon as those are up, while a slow other one goes on."""
    log: list[str] = []
    fast, slow = _Timed("fast", 0, 0.01, log), _Timed("slow", 0, 0.2, log)
    plain = _Timed("plain", 1, 0.0, log)
    anyio.run(HostFixtures([fast, slow, plain]).start, None)
    assert log.index("plain starts") > log.index("slow up")
    log.clear()
    anyio.run(HostFixtures([fast, slow, _WaitsForFirst(fast, log)]).start, None)
    assert log.index("fast up") < log.index("late starts") < log.index("slow up")


class _Options(Fixture):
    def __init__(self, *pairs: str) -> None:
        self.pairs = pairs

    def probe_args(self, cell: CellSetup) -> tuple[str, ...]:
        return self.pairs


def test_an_option_two_fixtures_give_is_passed_once() -> None:
    """The run's nonce is given by the canary and by the decision records: the probe
    gets it once, and every other pair as given."""
    fixtures = HostFixtures(
        [
            _Options("--canary-tcp", "a:1", "--nonce", "n"),
            _Options("--allowed-tcp", "b:2", "--nonce", "n"),
        ]
    )
    cell = CellSetup(cell=None, cell_id="c", runtime=None, paths=None)  # type: ignore[arg-type]
    assert fixtures.probe_options(cell) == [
        "--canary-tcp",
        "a:1",
        "--nonce",
        "n",
        "--allowed-tcp",
        "b:2",
    ]


def test_the_runner_names_no_scenario_and_no_property() -> None:
    """The runner composes fixtures from declared needs: a scenario's or property's
    name in it would mean a scenario is threaded through it by hand again."""
    source = (ROOT / "harness" / "runner.py").read_text()
    names = {s.name for s in SCENARIOS.values()} | {s.name for s in SCENARIOS.values()}
    names |= set(PROPERTIES)
    words = set(re.findall(r"[\w-]+", source))
    assert sorted(names & words) == []
    assert len(source.splitlines()) <= 450


def test_the_probe_tries_the_destination_an_external_revoke_command_takes_out() -> None:
    """An external supervisor's `revoke` takes out `attribution.allowed`: the probe's
    revocation checks aim there too, with or without the attribution scenario (whose
    records fixture names it as well), never at the canary's own allowed port."""
    spec = CommandRuntimeSpec.model_validate(
        {
            "kind": "command",
            "argv": ["{probe}", "{args}"],
            "attribution": {
                "source": "http",
                "url": "http://127.0.0.1:1/d",
                "allowed": "127.0.0.1:9",
                "revoke": "revoke-it",
                "restore": "restore-it",
            },
        }
    )
    runtime = make_runtime("external", spec)
    for names in (["revocation"], ["revocation", "attribution"]):
        composed = compose(needs_of([SCENARIOS[n] for n in names]), [runtime])
        # The sentinels need a prepared cell; they give no destination.
        fixtures = HostFixtures([f for f in composed if not isinstance(f, SentinelsFixture)])
        cell = CellSetup(cell=None, cell_id="c", runtime=runtime, paths=None)  # type: ignore[arg-type]
        options = fixtures.probe_options(cell)
        assert options[options.index("--allowed-tcp") + 1] == "127.0.0.1:9", names
        hooks = fixtures.phase_hooks(cell)
        assert hooks["revocation"] == "HARNESS_ALLOWED=127.0.0.1:9 sh -c revoke-it"
