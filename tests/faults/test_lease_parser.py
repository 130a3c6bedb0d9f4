"""The lease listing a host prints is parsed whatever it holds; a lease is over only
when its end is past or its run's lock is free, never by a pid."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harness.hostside.lease import parse_leases


@given(st.text(max_size=400))
def test_any_listing_parses_without_error(text: str) -> None:
    now, leases = parse_leases(text)
    assert now >= 0
    for lease in leases:
        lease.over(now)


@given(
    now=st.integers(min_value=1, max_value=2**40),
    ahead=st.integers(min_value=0, max_value=10**6),
    lock=st.sampled_from(["held", "free", "none"]),
    owner=st.text(alphabet="abc 0123456789", max_size=30),
)
def test_a_lease_is_over_by_its_end_or_its_free_lock(
    now: int, ahead: int, lock: str, owner: str
) -> None:
    text = f"now={now}\nlease abc123\n{now + ahead}\n{owner}\nlock {lock}\n\n"
    _, (lease,) = parse_leases(text)
    assert lease.run_id == "abc123" and lease.lock == lock
    assert lease.over(now) is (lock == "free")  # its end is not past
    assert lease.over(now + ahead + 1)  # past its end, whatever the lock
