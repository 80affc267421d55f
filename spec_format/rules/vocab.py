"""Data rules (D): values of tensors, opt-in because they read tensor bytes.

``--deep`` reads the two small vocabulary maps (``t2d``: V bytes, ``d2t``: 8 x D bytes, a
few hundred KB for a 150k vocabulary) and checks that they describe the same token
selection. ``--scan-weights`` streams every float tensor through one fixed buffer and
reports NaN/Inf values: memory stays the buffer size whatever the checkpoint size.

Both read bytes through the checkpoint's own byte sources (a local ``pread`` or HTTP range
requests), so they work on ``hf://`` checkpoints too. numpy is imported lazily.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from spec_format.base import progress
from spec_format.base.report import Severity
from spec_format.facts.safetensors_dtypes import NUMPY_DTYPES
from spec_format.parsers import weightstats
from spec_format.parsers.header_errors import HeaderError
from spec_format.rules.base import Context, Hit, Layer, Rule
from spec_format.rules.weights import VOCAB_MAP_TYPES, expectations, tensor_hit

#: ``--deep`` never reads a vocabulary map larger than this (a 16M-token vocabulary).
MAX_MAP_BYTES = 128 * 1024 * 1024
#: ``--scan-weights`` buffer: small enough that a chunk stays in the CPU cache between the
#: read and the bit test (2 MiB measured fastest); peak memory is about three times this.
SCAN_CHUNK_BYTES = 2 * 1024 * 1024

_INT_DTYPES = {k: v for k, v in NUMPY_DTYPES.items() if k[0] in "IU"}


# -- reading the maps -------------------------------------------------------------------


class VocabMaps:
    """``t2d`` as a boolean mask and ``d2t`` as int64, when present and readable."""

    def __init__(self) -> None:
        self.t2d: Any = None  # numpy bool array
        self.d2t: Any = None  # numpy int64 array
        self.V: int | None = None
        self.D: int | None = None
        self.problems: list[Hit] = []


def vocab_maps(ctx: Context) -> VocabMaps:
    """Read the maps once per context (``ctx.options['_vocab_maps']``)."""
    key = "_vocab_maps"
    if key in ctx.options:
        return ctx.options[key]
    import numpy as np

    maps = VocabMaps()
    exp = expectations(ctx)
    if exp is not None:
        V, D = exp.symbols.get("V"), exp.symbols.get("D")
        maps.V = V if isinstance(V, int) else None
        maps.D = D if isinstance(D, int) else None
    ckpt = ctx.checkpoint
    for name in ("t2d", "d2t"):
        record = ckpt.tensors.get(name)
        if record is None:
            continue
        try:
            raw = ckpt.read_tensor(name, MAX_MAP_BYTES)
        except ValueError as e:  # over the limit
            maps.problems.append(tensor_hit(ctx, name, f"{name} not checked: {e}"))
            continue
        except HeaderError as e:
            maps.problems.append(tensor_hit(ctx, name, f"{name} not checked: {e.message}"))
            continue
        if name == "t2d":
            maps.t2d = _nonzero_mask(raw, record.dtype)
        elif record.dtype in _INT_DTYPES:
            maps.d2t = np.frombuffer(raw, dtype=_INT_DTYPES[record.dtype]).astype(np.int64)
    ctx.options[key] = maps
    return maps


def _nonzero_mask(raw: bytes, dtype: str):
    """Which entries are non-zero, for any dtype (a float t2d is W011's to report; we still
    count what it selects). Floats are tested on their bits: +0.0 and -0.0 are zero."""
    import numpy as np

    width = {
        "BOOL": 1,
        "U8": 1,
        "I8": 1,
        "F8_E4M3": 1,
        "F8_E5M2": 1,
        "I16": 2,
        "U16": 2,
        "F16": 2,
        "BF16": 2,
        "I32": 4,
        "U32": 4,
        "F32": 4,
        "I64": 8,
        "U64": 8,
        "F64": 8,
    }.get(dtype)
    if width is None:
        return None
    values = np.frombuffer(raw, dtype={1: "u1", 2: "<u2", 4: "<u4", 8: "<u8"}[width])
    if dtype.startswith("F") or dtype == "BF16":
        magnitude = values.dtype.type((1 << (8 * width - 1)) - 1)  # every bit but the sign
        return (values & magnitude) != 0
    return values != 0


class _VocabRule(Rule):
    abstract = True
    layer = Layer.VOCAB
    severity = Severity.ERROR
    applies_to = VOCAB_MAP_TYPES
    requires = frozenset({"weights", "deep"})


class T2dCountMismatch(_VocabRule):
    """`t2d` does not select exactly `draft_vocab_size` tokens."""

    id = "D001"
    name = "t2d-count-mismatch"
    since = "0.1.0"
    references = ("SafeAILab/EAGLE#248",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        maps = vocab_maps(ctx)
        yield from maps.problems
        if maps.t2d is None or maps.D is None:
            return
        count = int(maps.t2d.sum())
        if count != maps.D:
            yield tensor_hit(
                ctx,
                "t2d",
                f"t2d selects {count} tokens, but draft_vocab_size is {maps.D}; rebuild the "
                f"vocabulary maps so that exactly {maps.D} entries are true",
            )


def _targets(maps: VocabMaps):
    import numpy as np

    return np.arange(len(maps.d2t), dtype=np.int64) + maps.d2t


class D2tOutOfRange(_VocabRule):
    """A draft token maps to a verifier token id outside the verifier vocabulary."""

    id = "D002"
    name = "d2t-out-of-range"
    since = "0.1.0"
    references = ("mobilint/mblt-model-zoo#110",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        import numpy as np

        maps = vocab_maps(ctx)
        V = maps.V if maps.V is not None else (len(maps.t2d) if maps.t2d is not None else None)
        if maps.d2t is None or V is None:
            return
        targets = _targets(maps)
        bad = np.flatnonzero((targets < 0) | (targets >= V))
        if bad.size:
            i = int(bad[0])
            ids = np.array_equal(maps.d2t, np.arange(len(maps.d2t)))
            yield tensor_hit(
                ctx,
                "d2t",
                f"{bad.size} draft id{'s' if bad.size != 1 else ''} map outside [0, {V}): "
                f"d2t[{i}] = {int(maps.d2t[i])} sends draft id {i} to verifier id {int(targets[i])}; "
                + (
                    "d2t is 0, 1, ..., the identity written as ids (a default buffer that never "
                    "got a mapping), but the engines read d2t as offsets (verifier id = draft id "
                    "+ d2t), so draft id i becomes 2i; a draft whose ids are the verifier's "
                    "needs a d2t of zeros"
                    if ids
                    else "d2t must hold selected_id - draft_id"
                ),
            )


class D2tNotIncreasing(_VocabRule):
    """`i + d2t[i]` is not strictly increasing."""

    id = "D003"
    name = "d2t-not-increasing"
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        import numpy as np

        maps = vocab_maps(ctx)
        if maps.d2t is None or len(maps.d2t) < 2:
            return
        targets = _targets(maps)
        bad = np.flatnonzero(np.diff(targets) <= 0)
        if bad.size:
            i = int(bad[0])
            yield tensor_hit(
                ctx,
                "d2t",
                f"draft ids {i} and {i + 1} map to verifier ids {int(targets[i])} and "
                f"{int(targets[i + 1])}: i + d2t[i] must be strictly increasing ({bad.size} "
                "violation" + ("s" if bad.size != 1 else "") + "); sort the selected ids",
            )


class D2tT2dInconsistent(_VocabRule):
    """`d2t` and `t2d` describe different token selections."""

    id = "D004"
    name = "d2t-t2d-inconsistent"
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        import numpy as np

        maps = vocab_maps(ctx)
        if maps.d2t is None or maps.t2d is None:
            return
        positions = np.flatnonzero(maps.t2d)
        targets = _targets(maps)
        if len(positions) != len(targets):
            return  # D001 (or W007) already explains the counts
        differ = np.flatnonzero(positions != targets)
        if differ.size:
            i = int(differ[0])
            yield tensor_hit(
                ctx,
                "d2t",
                f"d2t and t2d disagree on {differ.size} draft id{'s' if differ.size != 1 else ''}: "
                f"draft id {i} maps to verifier id {int(targets[i])} by d2t but t2d's {i}th "
                f"selected token is {int(positions[i])}; rebuild both from the same selected ids",
            )


# -- scanning every weight --------------------------------------------------------------

#: dtype -> (unsigned view, exponent mask, mantissa mask); a value is non-finite when all
#: exponent bits are set, and NaN when the mantissa is not zero as well.
_IEEE = {
    "F64": ("<u8", 0x7FF0000000000000, 0x000FFFFFFFFFFFFF),
    "F32": ("<u4", 0x7F800000, 0x007FFFFF),
    "C64": ("<u4", 0x7F800000, 0x007FFFFF),
    "F16": ("<u2", 0x7C00, 0x03FF),
    "BF16": ("<u2", 0x7F80, 0x007F),
    "F8_E5M2": ("u1", 0x7C, 0x03),
}
#: formats without infinities: the NaN bit patterns (under the mask)
_NAN_ONLY = {
    "F8_E4M3": (0x7F, 0x7F),
    "F8_E4M3FNUZ": (0xFF, 0x80),
    "F8_E5M2FNUZ": (0xFF, 0x80),
    "F8_E8M0": (0xFF, 0xFF),
}


def _clean_test(dtype: str, udtype):
    """A test that a chunk (a view of unsigned integers) holds no NaN or Inf, at memory
    speed: two max reductions of views, no temporaries. The exponent sits right below the
    sign bit, so a positive value has every exponent bit set exactly when it is at least
    the exponent mask read as a signed integer, and a negative one exactly when it is at
    least sign | mask read as unsigned. False sends the chunk to the exact count."""
    import numpy as np

    bits = udtype.itemsize * 8
    sign, ones = 1 << (bits - 1), (1 << bits) - 1
    signed = np.dtype(udtype.str.replace("u", "i"))
    if dtype in _IEEE:
        mask = _IEEE[dtype][1]
    else:  # formats without infinities: the NaN patterns of _NAN_ONLY
        mask, pattern = _NAN_ONLY[dtype]
        if (mask, pattern) == (ones, ones):  # NaN is the largest byte
            return lambda values: values.max() < pattern
        if (mask, pattern) == (ones, sign):  # NaN is the smallest signed byte
            return lambda values: values.view(signed).min() > -sign
        if (mask, pattern) != (sign - 1, sign - 1):
            return lambda values: False  # pragma: no cover - every format fits one above
    positive, negative = signed.type(mask), udtype.type(sign | mask)
    return lambda values: values.view(signed).max() < positive and values.max() < negative


def scan_tensor(ckpt, name: str, buffer: bytearray, observe=None) -> tuple[int, int, int | None]:
    """Count NaN and Inf values of one tensor by streaming it through ``buffer``; each chunk
    is also handed to ``observe`` (``weightstats.Observer.observe``) when given.

    Returns ``(nan, inf, first_index)``. Works on the bit patterns, so bf16 and fp8 need no
    conversion; temporaries are bounded by the buffer size.
    """
    import numpy as np

    record = ckpt.tensors[name]
    nan = inf = 0
    first: int | None = None
    seen = 0
    if record.dtype in _IEEE:
        view, exp_mask, mant_mask = _IEEE[record.dtype]
    elif record.dtype in _NAN_ONLY:
        view, (exp_mask, mant_mask) = "u1", _NAN_ONLY[record.dtype]
    else:
        return 0, 0, None
    udtype = np.dtype(view)
    if len(buffer) < udtype.itemsize:
        buffer = bytearray(udtype.itemsize)
    scratch = np.empty(len(buffer) // udtype.itemsize, dtype=udtype)
    flags = np.empty(len(buffer) // udtype.itemsize, dtype=bool)
    pattern = exp_mask if record.dtype in _IEEE else mant_mask
    clean = _clean_test(record.dtype, udtype)
    for chunk in ckpt.iter_chunks(name, buffer):
        if observe is not None:
            observe(chunk)
        values = np.frombuffer(chunk, dtype=udtype)
        n = values.size
        if n == 0 or clean(values):  # the common case: two reductions, no temporaries
            seen += n
            continue
        masked, hit = scratch[:n], flags[:n]
        np.bitwise_and(values, udtype.type(exp_mask), out=masked)
        np.equal(masked, udtype.type(pattern), out=hit)
        if hit.any():
            where = np.flatnonzero(hit)
            if first is None:
                first = seen + int(where[0])
            if record.dtype in _IEEE:
                mantissa = values[where] & udtype.type(mant_mask)
                k = int(np.count_nonzero(mantissa))
                nan += k
                inf += where.size - k
            else:
                nan += where.size
        seen += n
    return nan, inf, first


def _observe(seen: dict, name: str):
    return seen[name].observe if name in seen else None


class NonFiniteWeights(_VocabRule):
    """A weight tensor holds NaN or Inf values."""

    id = "D010"
    name = "non-finite-weights"
    since = "0.1.0"
    requires = frozenset({"weights", "scan"})
    applies_to = ()

    def check(self, ctx: Context) -> Iterator[Hit]:
        ckpt = ctx.checkpoint
        buffer = bytearray(SCAN_CHUNK_BYTES)
        scanned = sum(
            r.nbytes for r in ckpt.tensors.values() if r.dtype in _IEEE or r.dtype in _NAN_ONLY
        )
        where = str(ckpt.location).rstrip("/").rsplit("/", 1)[-1]
        with progress.task(f"NaN/Inf scan of {where}", scanned):
            yield from self._scan(ctx, ckpt, buffer)

    def _scan(self, ctx: Context, ckpt, buffer: bytearray) -> Iterator[Hit]:
        floats = [n for n, r in ckpt.tensors.items() if r.dtype in _IEEE or r.dtype in _NAN_ONLY]
        seen = weightstats.for_scan(ctx.options, ckpt.tensors, floats)  # D011 reads them
        for name, record in sorted(ckpt.tensors.items(), key=lambda kv: (kv[1].file, kv[1].begin)):
            try:
                nan, inf, first = scan_tensor(ckpt, name, buffer, _observe(seen, name))
            except HeaderError as e:
                seen.pop(name, None)
                yield tensor_hit(
                    ctx,
                    name,
                    f"{name} could not be scanned: {e.message}",
                )
                continue
            if nan or inf:
                parts = [
                    f"{count:,} {what}" for count, what in ((nan, "NaN"), (inf, "Inf")) if count
                ]
                share = " (every value)" if nan + inf == record.numel else ""
                yield tensor_hit(
                    ctx,
                    name,
                    f"{name} holds {' and '.join(parts)} value{'s' if nan + inf != 1 else ''}{share}, "
                    f"first at element {first}; NaN is how the speculators library marks weights "
                    "that were never loaded: load the verifier weights before saving, or re-export",
                )
