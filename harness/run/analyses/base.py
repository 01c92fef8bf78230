"""What the instrumented interpreter and its analyses share: the options, the record of what the
launches saw (``Recorder``, ``Launch``, ``Span``), where in the kernel an access is, and the
``Analysis`` interface each analysis module implements (``harness.run.interp_instrument`` calls
the active analyses from its patched interpreter methods)."""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass, field

TAG = "casebook_tensor"  # key in TensorHandle.attr: the tensor argument a pointer came from
LOAD, STORE, ATOMIC = 0, 1, 2
KIND_NAMES = ("load", "store", "atomic")


@dataclass
class Options:
    memcheck: bool = False
    race: bool = False
    order: object = "forward"  # "forward", "reverse" or an int seed
    poison_masked: bool = True
    oob_poison: bool = False  # memcheck: lanes of a load outside its tensor read poison, not other= or 0
    tf32: bool = True
    dry_run: bool = False  # each launch's grid checked against CUDA's limits, no program run
    int_wrap: bool = False  # signed integer adds, subtracts and multiplies checked in 64 bits (analyses.intwrap)
    fresh_tuning: bool = False  # every autotuned launch tunes afresh (analyses.tuning); on every backend


@dataclass
class Span:
    name: str
    lo: int  # first byte of the view
    hi: int  # one past its last byte
    itemsize: int


def view_span(t) -> tuple[int, int]:
    """(first byte, one past the last byte) of a tensor's view (not its whole storage): the extent the bounds check
    (``analyses.memcheck``) holds each access of that argument to."""
    size = t.element_size()
    lo = hi = t.data_ptr()
    if t.numel():
        lo += size * sum(min(0, (s - 1) * st) for s, st in zip(t.shape, t.stride()))
        hi += size * (1 + sum(max(0, (s - 1) * st) for s, st in zip(t.shape, t.stride())))
    return lo, hi


@dataclass
class Launch:
    kernel: str
    spans: dict
    grid: tuple = (1, 1, 1)
    accesses: list = field(default_factory=list)  # (addresses, pid, kind, line, lockset) for the race detector
    recorded: int = 0
    truncated: bool = False
    # spin locks (race detector): the program running holds ``held`` {address: (token, free value)};
    # ``tokens[t]`` is the lock's address once the program released it (None until then: a CAS that
    # is never undone is no lock); ``locksets[i]`` the tokens held during an access tagged ``i``.
    held: dict = field(default_factory=dict)
    tokens: list = field(default_factory=list)
    locksets: list = field(default_factory=lambda: [frozenset()])
    lockset: int = 0  # the index in ``locksets`` of what the running program holds now


@dataclass
class Recorder:
    """What the instrumented launches saw; plain data, read after the block."""

    options: Options
    launches: int = 0
    programs: dict = field(default_factory=dict)  # kernel -> programs of its latest launch (a dry run's too)
    oob: dict = field(default_factory=dict)  # (kind, tensor, side, line) -> {"lanes", "elements", "pid", ...}
    races: list = field(default_factory=list)
    cross_program: int = 0  # addresses one program wrote (store or atomic) and another touched (race recording)
    collisions: list = field(default_factory=list)  # stores whose lanes write different values to one address
    cross_lane: list = field(default_factory=list)  # loads of what other lanes stored, no barrier between
    overwrites: list = field(default_factory=list)  # stores over what other lanes stored, no barrier between
    atomics: int = 0
    float_atomics: int = 0
    tf32_dots: int = 0
    poisoned_loads: int = 0
    loads: int = 0  # tl.load calls made (a loop's trips count each)
    blocks: dict = field(default_factory=dict)  # constexpr name -> sorted int values seen
    poison_lines: list = field(default_factory=list)  # kernel lines whose masked lanes got poison
    dot_lines: list = field(default_factory=list)  # kernel lines of the tl.dot calls rounded like TF32
    truncated: bool = False
    current: Launch | None = None
    grid_limits: list = field(default_factory=list)  # launches past CUDA's grid limits (check_grid)
    wraps: list = field(default_factory=list)  # (kernel line, what) of the first wrap at each line (intwrap)
    retuned: int = 0  # autotuned launches whose tuning cache was emptied first (tuning)
    failed: list = field(default_factory=list)  # "analysis: error" where an analysis's own code raised (not the kernel)
    analyses: list = field(default_factory=list)  # every Analysis of the block, on or off
    active: list = field(default_factory=list)  # those the options turn on, for the launch running

    def pid(self) -> tuple:
        from triton.runtime import interpreter as interp

        return tuple(interp.interpreter_builder.grid_idx)


class Analysis:
    """One analysis of instrumented launches: the points of a launch it may act at. Each does
    nothing here; an analysis module overrides the ones it needs. ``on`` says whether the options
    ask for it (asked at each launch: a re-run may change them)."""

    name = ""  # the module's name: memcheck, races, poison, tf32, intwrap, tuning

    def on(self, options: Options) -> bool:
        return False

    def access(self, rec: Recorder, ptrs, addrs, mask, kind: int):
        """The active lanes (``mask``) of a load, store or atomic at ``addrs``; returns the lanes to perform."""
        return mask

    def load(self, rec: Recorder, ptrs, addrs, mask, other):
        """A ``tl.load``'s ``other=`` (None: none given) before it runs; returns the one to use."""
        return other

    def loaded(self, rec: Recorder, asked, mask, got):
        """What a ``tl.load`` read (``asked``: its mask as the kernel gave it; ``mask``: the lanes performed)."""
        return got

    def store(self, rec: Recorder, ptrs, addrs, mask, value) -> None:
        """A ``tl.store``'s lanes to perform (``mask``) and the values it writes, before it runs."""

    def barrier(self, rec: Recorder) -> None:
        """A ``tl.debug_barrier()``: every lane of the program waits there."""

    def atomic(self, rec: Recorder, op, addrs, mask, val) -> None:
        """After an ``atomic_rmw`` of ``op``."""

    def cas(self, rec: Recorder, addrs, mask, old, cmp, val) -> None:
        """After an ``atomic_cas`` that found ``old``."""

    def dot(self, rec: Recorder, a, b, input_precision):
        """A ``tl.dot``'s operands before it runs; returns the ones to use."""
        return a, b

    def arith(self, rec: Recorder, op: str, lhs, rhs, result) -> None:
        """After an integer or float ``+``, ``-`` or ``*`` (``op``: "add", "subtract", "multiply"), or an
        integer shift (``op``: "left_shift", "right_shift"), of the interpreter gave ``result``. Installed only for a block whose options turn on an analysis
        that overrides it (every operation of every program passes here)."""

    def autotune(self, rec: Recorder, tuner) -> None:
        """Before each launch of an autotuned kernel (``tuner``: its ``triton.runtime.autotuner.Autotuner``),
        on every backend (``interp_instrument.hooked`` installs only this one on a GPU). Installed only for a
        block whose options turn on an analysis that overrides it."""

    def program_starts(self, rec: Recorder) -> None:
        """Before each program of the launch ``rec.current``."""

    def launch_ends(self, rec: Recorder) -> None:
        """After the last program of the launch ``rec.current``."""


@functools.cache
def _skip_dirs() -> tuple:
    import numpy
    import triton

    here = os.path.dirname(__file__)  # this package, and the interpreter's patches beside it
    return (os.path.dirname(triton.__file__), os.path.dirname(numpy.__file__), here + os.sep,
            os.path.join(os.path.dirname(here), "interp_instrument.py"),
            os.path.join(os.path.dirname(here), "triton_compat.py"))  # its launch record and fixes wrap launches


def kernel_line(library: bool = True) -> str | None:
    """file:line of the innermost frame outside Triton, NumPy and the instrumented interpreter:
    the kernel's source line ("?": none). ``library=False``: None instead where the way out passes
    through Triton's own library functions (``tl.rand``'s Philox, ``tl.cdiv``: a module of
    ``triton.language`` other than the ``core`` and ``semantic`` every operation goes through)."""
    skip, lang = _skip_dirs(), _language_dir()
    f = sys._getframe(1)
    while f is not None:
        name = f.f_code.co_filename
        if not library and name.startswith(lang) and os.path.basename(name) not in ("core.py", "semantic.py"):
            return None
        if not name.startswith(skip):
            return f"{short_path(name)}:{f.f_lineno}"
        f = f.f_back
    return "?" if library else None


@functools.cache
def _language_dir() -> str:
    import triton

    return os.path.join(os.path.dirname(triton.__file__), "language") + os.sep


def short_path(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def poison_for(np_dtype):
    import numpy as np

    if np.issubdtype(np_dtype, np.floating):
        return np.nan
    if np_dtype == np.bool_:
        return True
    return np.iinfo(np_dtype).max


def owner_of(spans: dict, addr: int) -> tuple[str, int] | None:
    for s in spans.values():
        if s.lo <= addr < s.hi:
            return s.name, (addr - s.lo) // s.itemsize
    return None


def flat_pid(pid: tuple, grid: tuple) -> int:
    return pid[0] + grid[0] * (pid[1] + grid[1] * pid[2])


def pid_text(pid: tuple) -> str:
    return str(pid[0]) if pid[1:] == (0, 0) else str(tuple(pid))


def mask_data(mask):
    """A mask's lanes: a ``TensorHandle``'s data, or the bare bool array a block pointer's
    ``materialize_pointers`` returns (Triton 3.4 to 3.7)."""
    import numpy as np

    return mask if isinstance(mask, np.ndarray) else mask.data


def note_line(lines: list) -> None:
    line = kernel_line()
    if line not in lines:
        lines.append(line)
