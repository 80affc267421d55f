"""Remote inputs fetched ahead of their checks, a bounded number at a time.

An ``hf://`` draft waits on the network: its listing, its config and its headers (a redirect
and a range answer), one request after the other. :func:`ahead` runs those fetches for up to
``jobs`` drafts at once in worker threads while the caller checks the inputs in their order;
the checks themselves (rules, reports, the run's memo, progress) stay in the caller's
thread, so a run's report is the one a sequential run gives, in the same order.

Bounds:

* at most ``jobs`` fetches in flight, and at most ``2 * jobs`` inputs read ahead of the one
  being checked (each holds its config and headers): memory stays bounded however many
  inputs a run has;
* each fetch has its own deadline and byte budget (:class:`spec_format.parsers.remote.
  Budget`), started when its fetch starts: a draft whose Hub stalls holds its own worker
  until its own deadline, never another draft's;
* the workers are daemon threads and the caller waits for a fetch in short slices, so a
  signal (Ctrl-C, or SIGTERM and SIGHUP under :mod:`spec_format.base.signals`) ends the run
  at once with the reports it finished; a fetch still in flight is abandoned, not awaited.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from queue import SimpleQueue
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: a worker's stack: the fetch parses JSON with bounded nesting (256 KiB is enough for the
#: deepest header refused); the default (RLIMIT_STACK, often 8 MiB) is address space that a
#: ``ulimit -v`` counts for every thread
WORKER_STACK = 1024 * 1024
#: how long the caller blocks at a time while waiting for a fetch (a signal is handled
#: between waits at the latest)
WAIT_SLICE_S = 0.2


class Cancelled(Exception):
    """The run ended before this fetch started."""


class Fetch(Generic[R]):
    """One fetch, run by a worker; :meth:`result` waits for it in the caller's thread."""

    __slots__ = ("_work", "_done", "_value", "_error", "_queued")

    def __init__(self, work: Callable[[], R]) -> None:
        self._work = work
        self._queued = False  # handed to a worker
        self._done = threading.Event()
        self._value: R | None = None
        self._error: BaseException | None = None

    def run(self, cancelled: bool = False) -> None:
        try:
            if cancelled:
                raise Cancelled
            self._value = self._work()
        except BaseException as e:  # raised again in the caller's thread by result()
            self._error = e
        finally:
            self._work = None  # type: ignore[assignment]
            self._done.set()

    def result(self) -> R:
        """The fetch's value, or its exception raised here (waits in short slices). A fetch
        no worker took (none could start) runs here, in the caller's thread."""
        if self._work is not None and not self._queued:
            self.run()
        while not self._done.wait(WAIT_SLICE_S):
            pass
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        value, self._value = self._value, None  # handed over once: the caller owns it
        return value  # type: ignore[return-value]


def ahead(
    items: Iterable[T], work: Callable[[T], Callable[[], R] | None], jobs: int
) -> Iterator[tuple[T, Fetch[R] | None]]:
    """Each item of ``items`` in order, with its :class:`Fetch` (``work(item)``, the fetch
    to run ahead, or None for an item that needs none), started up to ``2 * jobs`` items
    ahead on at most ``jobs`` worker threads. Closing the iterator (or an exception in the
    caller) cancels the fetches not started yet."""
    queue: SimpleQueue[Fetch[R] | None] = SimpleQueue()
    stop = threading.Event()
    workers, startable = 0, True
    pending: deque[tuple[T, Fetch[R] | None]] = deque()
    source = iter(items)
    more = True
    try:
        while True:
            while more and len(pending) < 2 * jobs:
                try:
                    item = next(source)
                except StopIteration:
                    more = False
                    break
                task = work(item)
                fetch = None if task is None else Fetch(task)
                if fetch is not None:
                    if workers < jobs and startable:
                        startable = _start(queue, stop)  # once refused, not asked again
                        workers += startable
                    if workers:
                        fetch._queued = True
                        queue.put(fetch)
                    # else no thread could start (a memory limit): result() runs it in turn
                pending.append((item, fetch))
            if not pending:
                return
            yield pending.popleft()
    finally:
        stop.set()
        for _ in range(workers):
            queue.put(None)


def _start(queue: SimpleQueue, stop: threading.Event) -> bool:
    """Start one worker on a stack of :data:`WORKER_STACK` bytes; False when the system
    gives no thread (under a limit on address space each default 8 MiB stack counts)."""
    previous = threading.stack_size()
    try:
        threading.stack_size(WORKER_STACK)
        worker = threading.Thread(target=_worker, args=(queue, stop), daemon=True)
        worker.name = "specfmt-fetch"
        worker.start()
    except (RuntimeError, ValueError, MemoryError):
        return False
    finally:
        threading.stack_size(previous)
    return True


def _worker(queue: SimpleQueue, stop: threading.Event) -> None:
    while (fetch := queue.get()) is not None:
        fetch.run(cancelled=stop.is_set())
