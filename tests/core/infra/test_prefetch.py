"""prefetch: the sync worker's read-ahead keeps order, hands errors over and
stops its thread when the consumer stops."""

from __future__ import annotations

import threading

import pytest

from core.infra.prefetch import prefetch


def test_yields_every_item_in_order():
    assert list(prefetch(iter(range(500)), depth=2)) == list(range(500))


def test_a_producer_error_is_raised_at_the_item_it_stopped_at():
    def items():
        yield 1
        yield 2
        raise ValueError("ledger line 3 is not JSON")

    got = []
    with pytest.raises(ValueError, match="ledger line 3"):
        for x in prefetch(items()):
            got.append(x)
    assert got == [1, 2]


def test_stopping_early_stops_the_producer_and_closes_its_source():
    produced: list[int] = []
    closed = threading.Event()

    def items():
        try:
            for i in range(10_000):
                produced.append(i)
                yield i
        finally:
            closed.set()

    before = {t.name for t in threading.enumerate()}
    gen = prefetch(items(), depth=1, name="prefetch-under-test")
    assert next(gen) == 0
    gen.close()
    assert closed.is_set()
    assert len(produced) <= 3  # one handed over, at most one queued and one in hand
    assert "prefetch-under-test" not in {t.name for t in threading.enumerate()} - before
