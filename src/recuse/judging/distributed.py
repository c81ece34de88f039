"""Judging on a Ray cluster (the ``ray`` extra): a thin :class:`~recuse.judging.runner.Executor`.

Ray Data does the distribution. The tasks the runner has left to do (those not final
in the store) become a Ray Dataset, ``map_batches`` sends batches of them to a pool of
actors (one per GPU where the cluster has GPUs for a local model, else
``actors``), and each actor holds one backend built on its own machine (a local
model loaded once, on its GPU; or the HTTP client for a set of servers) and computes
its batches with :meth:`Runner.compute`, the same code and retry loop a local run
uses. The outcomes stream back to the driver (``iter_batches``) and the driver's
runner finishes and commits them to its store as they arrive, every ``FLUSH_SECONDS``
as in a local run: a killed distributed run resumes like a local one, by key, and
nothing but the driver writes the store. A failure stops it as it stops a local run:
the failed block's finished calls come back with the error, a gate (:class:`_Gate`, a
Ray actor each worker asks before a block) lets no block start after it, and the
blocks in flight on the other actors are committed before the error is raised (a
wait over :data:`~recuse.judging.runner.STOP_NOTE_AFTER` seconds is said, with the
error, as a local run says its own).

What travels to the workers: the tasks (prompts), the protocol, the judge id, the
retry policy and a picklable function that builds the backend. Never a secret: an
HTTP backend is built on the worker from the *name* of the environment variable that
holds the key (each worker must have it set), and a local model folder is read by
path (it must exist, with the same files, on every machine; the worker checks that
the model it loads has the id and revision the driver keyed the tasks with).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import math
import os
import pickle
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from recuse import interrupt
from recuse.borrowed import Borrowed
from recuse.errors import (
    WARNINGS_LOCK,
    ConfigError,
    JudgeError,
    MissingDependencyError,
    RecuseError,
)
from recuse.judging import runner as runner_module
from recuse.judging.backends.base import Backend
from recuse.judging.device import DType
from recuse.judging.runner import Computed, RetryPolicy, Runner
from recuse.judging.served import answered_since, read_served, served_json
from recuse.judging.store import Store
from recuse.judging.tasks import Task, Work

__all__ = ["CheckedFolder", "RayExecutor", "choose_placement"]

#: most blocks the task list is cut into (each block streams back when done)
MAX_BLOCKS = 4096
#: how long the pool's actors may take to start (build their backends) before work
ACTOR_START_SECONDS = 3600


def _ray() -> Any:
    try:
        import ray
        import ray.data  # the ``data`` part of the extra
    except ImportError:
        raise MissingDependencyError("ray[data]", "ray") from None
    return ray


class RayExecutor:
    """Computes a runner's tasks on a Ray cluster with Ray Data.

    ``backend`` builds the judge's backend on a worker (a picklable function: a
    :class:`~recuse.judging.backends.lazy.LazyBackend`'s ``backend`` method, or a
    ``functools.partial`` of :class:`~recuse.judging.backends.http.HTTPBackend`).
    ``address`` goes to ``ray.init``: ``None`` is Ray's default (``RAY_ADDRESS``, else
    the cluster started on this machine with ``ray start``, else a new local one),
    ``"local"`` a new cluster on this machine, ``"auto"`` the running one,
    ``"HOST:PORT"`` or ``"ray://HOST:10001"`` a remote one. If Ray is already
    initialised in this process, that connection is used. ``gpu``: each actor takes
    one GPU where the cluster has GPUs (a local model); ``actors`` is the pool size
    (default: one per GPU for a GPU pool, else 1). Each actor without a GPU takes one
    CPU.
    """

    def __init__(
        self,
        backend: Callable[[], Backend] | None,
        *,
        address: str | None = None,
        actors: int | None = None,
        gpu: bool = False,
    ) -> None:
        if actors is not None and actors < 1:
            raise ConfigError(f"--ray-actors must be 1 or more; got {actors}")
        _ray()  # missing, say so before any work
        self.factory = backend  # may be set later (the CLI places the pool first)
        self.address = address
        self.actors = actors
        self.gpu = gpu
        self._started = False
        #: the process that stops a local cluster started here when this run ends
        #: (:mod:`recuse.judging.warden`), a ``kill -9`` included
        self._warden: subprocess.Popen[bytes] | None = None
        self._tokens: tuple[int, int] | None = None
        #: served model names the workers' answers gave, added up (:meth:`served`)
        self._served: dict[str, int] = {}
        #: the last run's outcomes per worker ("node-ip:pid" -> count)
        self.workers: dict[str, int] = {}
        #: the last run's pool: actors and whether each holds a GPU
        self.pool: tuple[int, bool] | None = None
        #: the last run's verdict log-probs from servers (an HTTP judge's ``exact_ids``
        #: and ``exact_note`` on its workers): (True, note) where every worker read the
        #: verdict ids exactly, (False, why) where one fell back to the top-k; None:
        #: nothing said (a local model, or no verdict read)
        self.exact: tuple[bool, str] | None = None
        #: the last run's replies on its workers whose verdict was to be read from
        #: log-probs, and how many of them came without any (an HTTP judge's
        #: ``verdict_replies``, added up over the blocks)
        self.replies: tuple[int, int] = (0, 0)
        self._held = contextlib.ExitStack()  # while entered (:meth:`__enter__`)

    # --- the Ray connection -----------------------------------------------------

    def connect(self) -> Any:
        """Ray, initialised (started or connected once per executor)."""
        ray = _ray()
        if not ray.is_initialized():
            _check_reachable(self.address)
            try:
                with _sigterm_kept():
                    ray.init(
                        address=self.address,
                        include_dashboard=False,
                        logging_level=logging.WARNING,
                        log_to_driver=False,
                    )
            except (ConnectionError, ValueError, RuntimeError) as exc:
                raise ConfigError(
                    f"cannot reach the Ray cluster at {self.address or 'the default address'}"
                    f" ({_first_line(exc)}) — give --ray ADDRESS of a running cluster "
                    "(HOST:PORT or ray://HOST:10001), or --ray local"
                ) from None
            self._started = True
            self._warden = _start_warden()
        return ray

    def close(self) -> None:
        """Disconnect (and stop a cluster this executor started)."""
        if self._started:
            _ray().shutdown()
            self._started = False
        warden, self._warden = self._warden, None
        if warden is not None:  # its stdin closes: it stops what shutdown left, and ends
            assert warden.stdin is not None
            warden.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                warden.wait(timeout=10)

    def __enter__(self) -> RayExecutor:
        # a second Ctrl-C while the program stops ends it at once, the disconnect from
        # the cluster (its shutdown, where started here) included: the cluster drops a
        # dead driver's actors, and the warden stops a local one (recuse.interrupt)
        self._held.enter_context(interrupt.on_hurry(lambda: None))
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.close()
        finally:
            self._held.close()

    def usage(self) -> tuple[int, int] | None:
        return self._tokens

    def served(self) -> dict[str, int]:
        return dict(self._served)

    def placement(self, dtype: str, *, require_gpu: bool = False) -> tuple[str, DType]:
        """Where the pool's local model runs and in which dtype, resolved for the
        cluster rather than this machine (which may have no GPU): ``cuda:0`` (each GPU
        actor sees its own GPU as device 0) where this is a GPU pool and the cluster
        has GPUs, else ``cpu``; ``dtype`` ``auto`` is bfloat16 where one of the
        cluster's GPUs computes in it (compute capability 8.0 or newer), else float32.
        The dtype enters the judgments' keys, so it is fixed here, once, for every
        actor. ``require_gpu`` (``--device cuda``): a cluster without GPUs is refused;
        so is a pool (``actors``) larger than the cluster (before any work)."""
        ray = self.connect()
        gpus = int(ray.cluster_resources().get("GPU", 0))
        if require_gpu and gpus == 0:
            raise ConfigError(
                "--device cuda with --ray: the Ray cluster has no GPUs — use --device auto "
                "or cpu, or join GPU machines to the cluster"
            )
        self._pool(ray)
        return choose_placement(
            dtype,
            gpus=gpus if self.gpu else 0,
            capability=lambda: int(ray.get(ray.remote(num_gpus=1)(_capability).remote())),
        )

    def _pool(self, ray: Any) -> tuple[int, dict[str, float]]:
        """Actors and each actor's resources, checked against the cluster."""
        have = ray.cluster_resources()
        gpus, cpus = int(have.get("GPU", 0)), int(have.get("CPU", 0))
        if self.gpu and gpus > 0:
            n = self.actors or gpus
            if n > gpus:
                raise ConfigError(
                    f"--ray-actors {n} needs {n} GPUs (one per actor); the cluster has "
                    f"{gpus} — give --ray-actors {gpus} or fewer"
                )
            return n, {"num_gpus": 1}
        n = self.actors or 1
        if n > cpus:
            raise ConfigError(
                f"--ray-actors {n} needs {n} CPUs (one per actor); the cluster has {cpus}"
                f" — give --ray-actors {max(cpus, 1)} or fewer"
            )
        return n, {"num_cpus": 1}

    # --- Executor ----------------------------------------------------------------

    def run(
        self,
        todo: Sequence[Task],
        work: Work,
        *,
        judge: str,
        retry: RetryPolicy,
        batch_size: int,
        collect: Callable[[Sequence[Computed]], None],
        note: Callable[[BaseException, str], None] | None = None,
    ) -> None:
        """Compute ``todo`` on the pool; each finished block goes to ``collect``. Where
        a block fails and the wait for the blocks in flight on the other actors lasts
        over :data:`~recuse.judging.runner.STOP_NOTE_AFTER` seconds, ``note`` gets the
        error and how many are still out (:meth:`~recuse.judging.runner.Executor.run`);
        Ctrl-C then stops at once, what was collected kept. Ray Data's logger and
        context (the process's) are set for the run and put back after it."""
        if self.factory is None:
            raise ValueError("RayExecutor.run needs the backend builder (backend=)")
        ray = self.connect()
        with _RAY_DATA.held():
            self._run(ray, todo, work, judge, retry, batch_size, collect, note)

    def _run(
        self,
        ray: Any,
        todo: Sequence[Task],
        work: Work,
        judge: str,
        retry: RetryPolicy,
        batch_size: int,
        collect: Callable[[Sequence[Computed]], None],
        note: Callable[[BaseException, str], None] | None,
    ) -> None:
        """:meth:`run` on a connected ``ray``, its Ray Data settings made."""
        actors, resources = self._pool(ray)
        self.pool = (actors, "num_gpus" in resources)
        self.workers = {}
        handed = [0]  # outcomes handed to ``collect``, which commits them

        def handing(computed: Sequence[Computed]) -> None:
            handed[0] += len(computed)
            collect(computed)

        self.exact = None
        self.replies = (0, 0)
        size = max(1, batch_size)
        items = [{"task": pickle.dumps(t)} for t in todo]
        # blocks of at most ``size`` tasks (more past MAX_BLOCKS): each is one call of
        # an actor, and its outcomes come back, and are committed, as soon as it is done
        blocks = max(1, min(math.ceil(len(items) / size), MAX_BLOCKS))
        # no CPU: it must not take the place of an actor of the pool
        gate = ray.remote(num_cpus=0)(_Gate).remote()
        data = ray.data.from_items(items, override_num_blocks=blocks).map_batches(
            _Worker,
            fn_constructor_kwargs={
                "factory": self.factory,
                "judge": judge,
                "retry": retry,
                "work": work,
                "gate": gate,
            },
            batch_size=None,  # a block is a batch: Ray Data would merge small blocks
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=actors),
            **resources,
        )
        # no prefetching: with a batch fetched ahead (Ray's default), a block that is
        # done was handed over only once the next one was too (a fast block waited for
        # a slow one on another actor: measured, 3 s of 0.1 and 3 s blocks on two
        # actors), so its outcomes were committed late, and lost to a Ctrl-C meanwhile
        batches = data.iter_batches(batch_size=None, batch_format="numpy", prefetch_batches=0)
        first: RecuseError | None = None  # the failure that stops the run
        entered: int | None = None  # blocks let in, once the gate is closed
        rows: dict[int, int] = {}  # block -> its rows not yet received
        ended = threading.Event()  # the stream is done with: the watch below ends

        def watch() -> None:
            """From a thread: once the gate closes (a call failed on an actor, which says
            so at once, while its block and the others let in run on), and the run has
            waited :data:`~recuse.judging.runner.STOP_NOTE_AFTER` seconds more for
            those not all back here, the note (Ray Data may hand a failed block back
            only with a slower one: the stream alone would learn of it too late)."""
            assert note is not None
            try:
                while (closed := ray.get(gate.closing.remote(1.0))) is None:
                    if ended.is_set():
                        return
            except Exception:  # the gate ended with the run
                return
            if ended.wait(runner_module.STOP_NOTE_AFTER):
                return
            let_in, why = closed
            # the blocks let in whose rows are not all back (read by key: the stream's
            # thread may add one meanwhile)
            n = sum(1 for k in range(let_in) if rows.get(k, 1) != 0)
            if n == 0:
                return
            error = first or (pickle.loads(why) if why else JudgeError("a Ray worker failed"))
            if n == 1:
                note(error, "the batch in flight on a Ray actor ends and is")
            else:
                note(error, f"the {n} batches in flight on the Ray actors end and are")

        watcher = threading.Thread(target=watch, name="recuse-ray-stop-note", daemon=True)
        if note is not None:
            watcher.start()
        try:
            with (
                _ray_errors(lambda: handed[0], len(todo), _noun(work)),
                _stream_threads_ended(),
                contextlib.closing(iter(batches)) as stream,
            ):
                for batch in stream:
                    # a Ctrl-C stops the driver once a block that came back is handed
                    # over and committed (interrupt.shielded), not in between: that
                    # block's work lost, and done again by the next run
                    with interrupt.shielded():
                        self._take(batch, handing)
                        for block, n in zip(batch["block"], batch["rows"], strict=True):
                            rows[int(block)] = rows.get(int(block), int(n)) - 1
                        errors = [e for e in batch["error"] if e]
                        if errors and first is None:
                            first = pickle.loads(errors[0])
                            # no block starts from now (the failing worker may have closed
                            # the gate already); those let in finish and are committed
                            entered = int(ray.get(gate.close.remote()))
                    if entered is not None and all(rows.get(k, 1) == 0 for k in range(entered)):
                        break  # the rest were never started: nothing more comes
        except RecuseError:
            if first is None:
                raise
            # met while the run stopped (a store that cannot take a block in flight,
            # an actor lost with one): the failure that stopped it is the one said,
            # as in a local run
        finally:
            ended.set()
            with contextlib.suppress(Exception):  # Ctrl-C, a store that cannot write
                gate.close.remote()
                # ended now (the stream is closed: no block asks it again), not when its
                # last handle goes: a failed run's traceback holds this frame, and a
                # caller or notebook that keeps the error would keep its process alive
                ray.kill(gate)
            if watcher.is_alive():  # its call to the gate ends with the gate (a thread
                # still in Ray at the executor's ray.shutdown() ends the process)
                watcher.join(timeout=STREAM_END_SECONDS)
        if first is not None:
            raise first

    def _take(
        self, batch: dict[str, np.ndarray], collect: Callable[[Sequence[Computed]], None]
    ) -> None:
        """A batch's outcomes to ``collect``; its workers, verdict reading and tokens
        counted."""
        # a failed block's error row holds no outcome
        have = np.array([len(c) > 0 for c in batch["computed"]], dtype=bool)
        computed = [pickle.loads(b) for b in batch["computed"][have]]
        for w in batch["worker"][have]:
            self.workers[str(w)] = self.workers.get(str(w), 0) + 1
        for state, note in zip(batch["exact"], batch["exact_note"], strict=True):
            if state == 0:  # a worker on top-k: what the run's rows may lack
                self.exact = (False, str(note))
            elif state == 1 and self.exact is None:
                self.exact = (True, str(note))
        if "replies" in batch:  # the blocks' replies read for verdict log-probs
            n, bare = self.replies
            self.replies = (n + int(batch["replies"].sum()), bare + int(batch["bare"].sum()))
        if batch["usage"].any():
            known = batch["usage"]
            t_in = int(batch["tokens_in"][known].sum())
            t_out = int(batch["tokens_out"][known].sum())
            a, b = self._tokens or (0, 0)
            self._tokens = (a + t_in, b + t_out)
        for said in batch["served"] if "served" in batch else ():  # before the outcomes
            for name, k in read_served(said).items():  # are checked (Runner: _ServedCheck)
                self._served[name] = self._served.get(name, 0) + k
        if computed:
            collect(computed)


class _Gate:
    """The pool's gate, a small Ray actor: a worker asks it before each block
    (:meth:`enter`, one call). A failed block closes it (:meth:`close`), so no block
    starts after it, on any actor: the run ends with the blocks in flight, and a key
    refused on one block is not sent again with every other block. The driver waits
    on it (:meth:`closing`) to say a wait for the blocks in flight that lasts.

    An async actor (for :meth:`closing`): its methods run one at a time on its event
    loop, so :meth:`enter` and :meth:`close` are each atomic."""

    def __init__(self) -> None:
        self.entered = 0
        self.closed = asyncio.Event()
        self.error = b""  # the first error it was closed with (:func:`_error`)

    def enter(self) -> int:
        """The block's number (0, 1, ... as they start), or -1: closed, do not start."""
        if self.closed.is_set():
            return -1
        self.entered += 1
        return self.entered - 1

    def close(self, error: bytes = b"") -> int:
        """Let no further block in; the number of blocks let in. ``error``: why (the
        failed call's error, as :func:`_error` gives it), kept where it is the first."""
        self.closed.set()
        self.error = self.error or error
        return self.entered

    async def closing(self, timeout: float) -> tuple[int, bytes] | None:
        """Once closed (within ``timeout`` seconds): the blocks let in and the error it
        was closed with (empty: none given); None: still open."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.closed.wait(), timeout)
        return (self.entered, self.error) if self.closed.is_set() else None


#: the driver threads Ray Data starts for a stream of batches (its executor's, and the
#: workers that fetch and format the blocks), by name; they end with the stream
_STREAM_THREADS = ("iter_threaded", "StreamingExecutor")
#: how long the end of a stream waits for them
STREAM_END_SECONDS = 30.0


@contextmanager
def _stream_threads_ended(timeout: float = STREAM_END_SECONDS) -> Iterator[None]:
    """The block (a stream of batches, closed as it ends) ends once the threads Ray Data
    started for it have ended (within ``timeout`` seconds). Closing the stream only
    tells them to stop: a worker in the middle of fetching a block finishes it first,
    and one still in Ray after ``ray.shutdown()`` (the executor's exit, at once where a
    Ctrl-C or SIGTERM stopped the stream) ended the process with Ray's "core worker
    has already been shutdown" and exit code 1, not recuse's stop line and code."""
    before = set(threading.enumerate())
    try:
        yield
    finally:
        deadline = time.monotonic() + timeout
        for thread in set(threading.enumerate()) - before:
            if thread.name.startswith(_STREAM_THREADS):
                thread.join(max(0.0, deadline - time.monotonic()))


@contextmanager
def _sigterm_kept() -> Iterator[None]:
    """The block (``ray.init``) leaves SIGTERM's handler as it was: Ray's driver takes it
    over with ``sys.exit(15)``, so a SIGTERM to ``recuse judge --ray`` (``kill``, a
    scheduler's limit) raised SystemExit wherever the driver was: the command exited
    15 without a word, not 143 with recuse's line (:mod:`recuse.interrupt`), and a
    commit it cut short was lost."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if before is not None:
            signal.signal(signal.SIGTERM, before)


#: the Ray Data context's fields a run sets (:func:`_run_settings`)
_CONTEXT_FIELDS = ("enable_progress_bars", "print_on_execution_start", "wait_for_min_actors_s")


def _data_context() -> Any:
    """Ray Data's context (one per process)."""
    with WARNINGS_LOCK, warnings.catch_warnings():
        # Ray Data makes its context setting a field it deprecates itself
        # (use_push_based_shuffle, Ray 2.60): under `python -W error` the run ended
        # on that DeprecationWarning's traceback before any work
        warnings.simplefilter("ignore", DeprecationWarning)
        return _ray().data.DataContext.get_current()


def _ray_settings() -> tuple[int, tuple[Any, ...]]:
    """The ``ray.data`` logger's level and the context fields a run sets: the
    process's, which a run set for good (a script's or notebook's own Ray Data work
    after a recuse run showed no bar and logged no warning)."""
    context = _data_context()
    level = logging.getLogger("ray.data").level
    return level, tuple(getattr(context, name) for name in _CONTEXT_FIELDS)


def _run_settings(_found: object) -> None:
    """Ray Data's settings for a run (:data:`_RAY_DATA`)."""
    logging.getLogger("ray.data").setLevel(logging.ERROR)  # the runner reports
    context = _data_context()
    context.enable_progress_bars = False  # the runner shows its own bar
    context.print_on_execution_start = False
    # work goes out once every actor holds its model, so it can spread over them all
    # (loading a large model takes minutes; the pool was checked against the
    # cluster's resources first, so this waits for loading, not for machines). Ray
    # Data gives each block to the least busy actor it has seen start: it does not
    # promise each actor a block (one may take two while another's start is noted)
    context.wait_for_min_actors_s = ACTOR_START_SECONDS


def _put_back(found: tuple[int, tuple[Any, ...]]) -> None:
    level, values = found
    logging.getLogger("ray.data").setLevel(level)
    context = _data_context()
    for name, value in zip(_CONTEXT_FIELDS, values, strict=True):
        setattr(context, name, value)


#: Ray Data's logger and context (one per process): set for each run, put back after
_RAY_DATA = Borrowed(_ray_settings, _run_settings, _put_back)


def _start_warden() -> subprocess.Popen[bytes] | None:
    """Where ``ray.init`` started a cluster on this machine (not where it connected to
    one), the warden (:mod:`recuse.judging.warden`) over the processes Ray started for
    it: when this process ends, however it ends, its pipe closes and the warden stops
    them and what they started (the raylet's agents outlived a ``kill -9``). None
    where nothing was started here, or on a system without ``/proc``-style process
    listing (psutil missing)."""
    from ray._private import worker

    node = getattr(worker, "_global_node", None)
    processes = getattr(node, "all_processes", None) or {}
    pids = sorted(
        {
            int(info.process.pid)
            for infos in processes.values()
            for info in infos
            if getattr(info, "process", None) is not None
        }
    )
    if not pids or importlib.util.find_spec("psutil") is None:
        return None
    script = Path(__file__).with_name("warden.py")
    return subprocess.Popen(  # its own session: a signal to this run's group spares it
        [sys.executable, str(script), *map(str, pids)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )


def _check_reachable(address: str | None, *, timeout: float = 5.0) -> None:
    """Refuse at once a HOST:PORT (or ray://HOST:PORT) nothing answers at: Ray itself
    retries such an address for minutes before it gives up."""
    if address is None or address in ("local", "auto"):
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(
            f"--ray {address!r}: give local, auto, HOST:PORT or ray://HOST:PORT "
            "(e.g. head-node:6379)"
        )
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as exc:
        raise ConfigError(
            f"cannot reach the Ray cluster at {address} ({exc.strerror or exc}) — start it "
            "there with `ray start --head`, or give --ray local for a cluster on this machine"
        ) from None


def choose_placement(dtype: str, *, gpus: int, capability: Callable[[], int]) -> tuple[str, DType]:
    """(device, dtype) of a pool's actors: ``cuda:0`` with ``gpus``, else ``cpu``;
    ``auto`` is bfloat16 where ``capability()`` (the major compute capability of one
    of the cluster's GPUs, asked only then) is 8 or more, else float32."""
    if dtype not in ("auto", "float32", "bfloat16"):
        raise ConfigError(f"--dtype must be auto, float32 or bfloat16, not {dtype!r}")
    device = "cuda:0" if gpus > 0 else "cpu"
    if dtype == "float32":
        return device, "float32"
    if dtype == "bfloat16":
        return device, "bfloat16"
    if gpus == 0:
        return device, "float32"
    return device, "bfloat16" if capability() >= 8 else "float32"


def _capability() -> int:
    """Run on a GPU actor of the cluster: its major CUDA compute capability."""
    import torch

    return int(torch.cuda.get_device_capability(0)[0])


@dataclass(frozen=True)
class CheckedFolder:
    """Builds a local model on a worker once its copy of ``folder`` has the files the
    driver fingerprinted (``fingerprint``, the revision in the judgments' keys): another
    copy of the weights on one machine must not judge under the driver's key."""

    load: Callable[[], Backend]
    folder: str
    fingerprint: str

    def __call__(self) -> Backend:
        from recuse.judging.fingerprint import folder_fingerprint

        host = socket.gethostname()
        if not Path(self.folder).is_dir():
            raise ConfigError(
                f"the model folder {self.folder} does not exist on Ray machine {host} — "
                "put it at the same path on every machine (a shared disk or a copy)"
            )
        here = folder_fingerprint(self.folder)
        if here != self.fingerprint:
            raise ConfigError(
                f"the model folder {self.folder} on Ray machine {host} holds other files "
                f"(fingerprint {here}) than on the driver ({self.fingerprint}) — copy the "
                "same weights to every machine"
            )
        return self.load()


class _Worker:
    """One actor of the pool: a backend built on its machine and a store-less runner.

    Each block it computes comes back as rows: one per outcome, and where the block
    failed one more that carries the error (after the outcomes its calls finished:
    the calls in flight when one raised end first, as in a local run). Every row
    names its block (the gate's number) and the block's rows, so the driver knows
    when the blocks in flight at a failure are all back."""

    def __init__(
        self,
        factory: Callable[[], Backend],
        judge: str,
        retry: RetryPolicy,
        work: Work,
        gate: Any,
    ) -> None:
        import ray

        self.ray = ray
        self.gate = gate
        self.name = f"{ray.util.get_node_ip_address()}:{os.getpid()}"
        self.work = work
        self.loop = asyncio.new_event_loop()  # one loop: an HTTP client stays usable
        self.error: bytes = b""
        try:
            self.backend = factory()
        except Exception as exc:  # sent back with the first batch (see _error)
            self.error = _error(exc)
            return
        # the runner's commits are the driver's: this in-memory store is never written
        self.runner = Runner(
            self.backend, Store(":memory:"), judge=judge, retry=retry, progress=False
        )

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        block = int(self.ray.get(self.gate.enter.remote()))
        if block < 0:  # a block failed: this one is not started (none of its calls sent)
            return self._rows([], block=block, error=b"")
        if self.error:
            self.gate.close.remote(self.error)
            return self._rows([], block=block, error=self.error)
        tasks: list[Task] = [pickle.loads(b) for b in batch["task"]]
        before = self.backend.usage()
        asked = _replies(self.backend)
        seen = self.backend.served()
        done: list[Computed] = []
        error = b""
        try:
            computed = self.loop.run_until_complete(self._compute(tasks, done))
        except Exception as exc:
            computed, error = done, _error(exc)
            self.gate.close.remote(error)  # where the watch below had no turn to
        after = self.backend.usage()
        tokens = None
        if after is not None:
            b = before or (0, 0)
            tokens = (after[0] - b[0], after[1] - b[1])
        now = _replies(self.backend)
        replies = (now[0] - asked[0], now[1] - asked[1])
        served = answered_since(seen, self.backend.served())
        return self._rows(
            computed, block=block, error=error, tokens=tokens, replies=replies, served=served
        )

    async def _compute(self, tasks: list[Task], done: list[Computed]) -> list[Computed]:
        """The block's outcomes; the first call that raises closes the gate at once,
        while this block's other calls in flight finish."""
        stopping = asyncio.Event()
        raised: list[BaseException] = []

        async def close_gate() -> None:
            await stopping.wait()
            self.gate.close.remote(_error(raised[0]) if raised else b"")

        watch = asyncio.ensure_future(close_gate())
        try:
            return await self.runner.compute(
                tasks, self.work, done=done, stopping=stopping, raised=raised
            )
        finally:
            watch.cancel()

    def _rows(
        self,
        computed: Sequence[Computed],
        *,
        block: int,
        error: bytes,
        tokens: tuple[int, int] | None = None,
        replies: tuple[int, int] = (0, 0),
        served: dict[str, int] | None = None,
    ) -> dict[str, np.ndarray]:
        """The block's rows: its outcomes, then its error where it failed (a row
        without an outcome); none for a block not started. The block's tokens,
        ``replies`` (:func:`_replies`) and served model names (JSON:
        :func:`~recuse.judging.served.served_json`) are on its first row."""
        tail = [error] if error else []  # the failed block's error row
        n = len(computed) + len(tail)
        exact = getattr(getattr(self, "backend", None), "exact_ids", None)  # an HTTP judge's
        state = -1 if exact is None else int(bool(exact))
        note = str(getattr(getattr(self, "backend", None), "exact_note", ""))
        counts = np.zeros((2, n), dtype=np.int64)
        usage = np.zeros(n, dtype=bool)
        if tokens is not None and n:  # the block's tokens, on its first row
            counts[:, 0] = tokens
            usage[0] = True
        said = np.zeros((2, n), dtype=np.int64)
        named = [""] * n
        if n:
            said[:, 0] = replies
            named[0] = served_json(served or {}) or ""
        return {
            "computed": np.array(
                [pickle.dumps(c) for c in computed] + [b""] * len(tail), dtype=object
            ),
            "worker": np.array([self.name] * n, dtype=object),
            "tokens_in": counts[0],
            "tokens_out": counts[1],
            "usage": usage,
            "exact": np.full(n, state, dtype=np.int8),
            "exact_note": np.array([note] * n, dtype=object),
            "replies": said[0],
            "bare": said[1],
            "served": np.array(named, dtype=object),
            "error": np.array([b""] * len(computed) + tail, dtype=object),
            "block": np.full(n, block, dtype=np.int64),
            "rows": np.full(n, n, dtype=np.int64),
        }


def _replies(backend: object) -> tuple[int, int]:
    """An HTTP judge's ``verdict_replies`` (replies read for verdict log-probs, and
    those of them that came without any) so far; (0, 0) for another backend."""
    n, bare = getattr(backend, "verdict_replies", (0, 0))
    return int(n), int(bare)


def _error(exc: BaseException) -> bytes:
    """A worker's error as data: Ray keeps an exception's text but not its type, so a
    recuse error (a missing model folder or key variable, a refused option) is
    pickled and raised on the driver as itself; any other is one line naming it."""
    if isinstance(exc, RecuseError):
        try:
            return pickle.dumps(exc)
        except Exception:  # pragma: no cover - recuse errors are plain exceptions
            pass
    return pickle.dumps(JudgeError(f"a Ray worker failed: {_first_line(exc)}"))


def _noun(work: Work) -> str:
    """What ``work``'s outcomes are called."""
    return "perplexities" if work.kind == "perplexity" else "judgments"


def kept_words(handed: int, sent: int, what: str = "judgments") -> str:
    """What a Ray run that failed keeps: the ``handed`` outcomes of its ``sent`` tasks
    the driver received, each committed to the store as it came (the runner's
    collector; the last of them as the run ends). None: nothing was stored, and a rerun
    starts from the beginning (it said "finished judgments are kept" all the same).

    >>> kept_words(0, 40)
    'none of its 40 judgments was stored: a rerun starts from the beginning'
    >>> kept_words(12, 40)
    '12 of its 40 judgments are stored and kept, and a rerun resumes from them'
    """
    if handed <= 0:
        return f"none of its {sent:,} {what} was stored: a rerun starts from the beginning"
    return f"{handed:,} of its {sent:,} {what} are stored and kept, and a rerun resumes from them"


@contextmanager
def _ray_errors(handed: Callable[[], int], sent: int, what: str) -> Iterator[None]:
    """Recuse errors (the workers' included) as they are; a failure of Ray itself (an
    actor or machine lost) as one line, saying how many of the ``sent`` tasks' outcomes
    (``what``) were ``handed`` to the runner, which commits them (:func:`kept_words`)."""
    try:
        yield
    except RecuseError:
        raise
    except Exception as exc:
        raise JudgeError(
            f"the Ray run failed: {_first_line(exc)} (the workers' logs are under "
            f"/tmp/ray/session_latest/logs on each machine); {kept_words(handed(), sent, what)}"
        ) from None


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _first_line(exc: BaseException) -> str:
    text = _ANSI.sub("", str(exc)).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip()
