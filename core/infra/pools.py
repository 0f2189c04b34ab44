"""A small pool of daemon worker threads.

``ThreadPoolExecutor`` joins its workers when the interpreter exits, so a
fresh ``ars recall`` that had its answer still waited for a Neo4j search
stuck connecting to a black-holed server (the driver's connect timeout).
Recall never needs that search's result once its deadline has passed, so the
Neo4j tier runs on daemon threads that the exit abandons.
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future
from typing import Any, Callable


class DaemonPool:
    """``submit``/``shutdown`` like an executor, on at most ``workers`` daemon threads."""

    def __init__(self, workers: int, name: str):
        self._workers = workers
        self._name = name
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._running = 0
        self._closed = False

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        fut: Future = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot submit after shutdown")
            self._queue.put((fut, fn, args))
            if self._idle == 0 and len(self._threads) < self._workers:
                t = threading.Thread(target=self._work, name=f"{self._name}_{len(self._threads)}", daemon=True)
                self._threads.append(t)
                t.start()
            else:
                self._idle -= 1 if self._idle else 0
        return fut

    def busy(self) -> bool:
        """Whether a task is running or waiting."""
        with self._lock:
            return self._running > 0 or not self._queue.empty()

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            fut, fn, args = item
            if not fut.set_running_or_notify_cancel():
                self._rest()
                continue
            with self._lock:
                self._running += 1
            try:
                fut.set_result(fn(*args))
            except BaseException as exc:  # noqa: BLE001 - delivered to the caller
                fut.set_exception(exc)
            finally:
                with self._lock:
                    self._running -= 1
                self._rest()

    def _rest(self) -> None:
        with self._lock:
            self._idle += 1

    def shutdown(self, wait: bool = False, cancel_futures: bool = True) -> None:
        with self._lock:
            self._closed = True
            threads = list(self._threads)
        if cancel_futures:
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    item[0].cancel()
        for _ in threads:
            self._queue.put(None)
        if wait:
            for t in threads:
                t.join()

    def after_last(self, fn: Callable[[], Any]) -> None:
        """Run ``fn`` on a daemon thread once every worker has exited (after ``shutdown``)."""
        with self._lock:
            threads = list(self._threads)

        def wait_then_run() -> None:
            for t in threads:
                t.join()
            fn()

        threading.Thread(target=wait_then_run, name=f"{self._name}_after", daemon=True).start()
