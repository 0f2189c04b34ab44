"""Run an iterator one step ahead in a background thread.

The sync worker's two halves use different resources: reading the ledger and
building a batch is Python CPU, committing it is a wait on the Neo4j server
(the driver releases the GIL while it waits). Overlapping them makes a sync
take about the longer of the two instead of their sum.
"""

from __future__ import annotations

import queue
import threading
from typing import Iterable, Iterator, TypeVar

T = TypeVar("T")
_DONE = object()


def prefetch(items: Iterable[T], depth: int = 1, name: str = "ars-prefetch") -> Iterator[T]:
    """Yield ``items`` in order while a thread produces up to ``depth`` ahead.

    An exception in the producer is raised here, at the item it stopped at.
    Closing this generator early (break, an exception in the consumer) stops
    the producer at its next item and waits for it, so nothing runs on after.
    """
    q: queue.Queue = queue.Queue(maxsize=max(1, depth))
    stop = threading.Event()

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        it = iter(items)
        try:
            for item in it:
                if not put((True, item)):
                    return
            put((True, _DONE))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            put((False, exc))
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=produce, name=name, daemon=True)
    thread.start()
    try:
        while True:
            ok, item = q.get()
            if not ok:
                raise item  # type: ignore[misc]
            if item is _DONE:
                return
            yield item
    finally:
        stop.set()
        thread.join()
