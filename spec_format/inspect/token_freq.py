"""Read a workload's token counts (``--token-freq FILE``) into one vector over the verifier
vocabulary.

Accepted files:

* ``.pt`` / ``.pth``: what speculators' data preparation writes as ``token_freq.pt``, a
  ``{token_id: count}`` dict saved with ``torch.save`` (a 1-D tensor of counts works too).
  Loaded with ``torch.load(weights_only=True)``, so it needs torch, imported here only.
* ``.npy``: a 1-D array of counts indexed by token id (no pickles).
* ``.json``: a list of counts indexed by token id, or an object ``{"token_id": count}``.

Counts are non-negative finite numbers; their total must be positive. numpy is imported
lazily.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from spec_format.base import extras
from spec_format.base.errors import InputError, UsageError

#: A token-count file larger than this is not one: a {token_id: count} JSON map of a
#: million-token vocabulary is ~20 MB, its .npy 8 MB (read by the bounded reader).
MAX_FILE_BYTES = 64 * 1024 * 1024


def _numpy():
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy ships with the dev and deep extras
        raise UsageError(extras.missing("--token-freq", "deep")) from None
    return np


def load_token_counts(path: Path, vocab_size: int):
    """The counts as a float64 vector of length ``vocab_size`` (missing ids count 0)."""
    from spec_format.base.bounded import ReadRefused, read_file

    np = _numpy()
    try:  # a FIFO, device or directory is refused, and nothing past the cap is read
        data = read_file(path, limit=MAX_FILE_BYTES, what="token counts")
    except ReadRefused as refused:
        raise InputError(f"--token-freq {refused.message}") from None
    suffix = path.suffix.lower()
    if suffix not in (".pt", ".pth", ".npy", ".json"):
        raise UsageError(
            f"--token-freq {path}: unknown file type {path.suffix or '(none)'!r}; pass a "
            "token_freq.pt, a .npy array or a .json list/object of counts"
        )
    if suffix in (".pt", ".pth"):
        raw = _load_torch(path, data)
    elif suffix == ".npy":
        raw = _load_npy(np, path, data, vocab_size)
    else:
        try:
            raw = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            raise InputError(f"--token-freq {path}: not valid JSON ({e})") from None
    counts = _to_vector(raw, path, vocab_size)
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(counts.sum())
    if not math.isfinite(total):
        raise InputError(
            f"--token-freq {path}: the counts add up to more than a float holds; counts are "
            "how often each token occurs (scale them down)"
        )
    if not total > 0:
        raise InputError(f"--token-freq {path}: every count is zero; nothing to weigh")
    return counts


def _load_npy(np, path: Path, data: bytes, vocab_size: int) -> Any:
    """A 1-D array from ``.npy`` bytes; the header's shape is checked against the bytes
    that follow it and the vocabulary before numpy allocates anything."""
    import io

    from numpy.lib import format as npy

    stream = io.BytesIO(data)
    try:
        version = npy.read_magic(stream)
        header = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        shape, _, dtype = header(stream)
    except (OSError, ValueError, SyntaxError, TypeError) as e:
        raise InputError(f"--token-freq {path}: not a readable .npy array ({e})") from None
    if dtype.hasobject:
        raise InputError(f"--token-freq {path}: holds Python objects (pickles); not counts")
    items = math.prod(shape)
    if len(shape) == 1 and items > vocab_size:
        raise InputError(
            f"--token-freq {path}: {items:,} counts for a verifier vocabulary of "
            f"{vocab_size:,} tokens; were the counts made with another tokenizer?"
        )
    if items * dtype.itemsize > len(data) - stream.tell():
        raise InputError(
            f"--token-freq {path}: the header says shape {tuple(shape)} of {dtype}, "
            f"{items * dtype.itemsize:,} bytes, but the file holds {len(data) - stream.tell():,} "
            "after it (truncated?)"
        )
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except (OSError, ValueError) as e:
        raise InputError(f"--token-freq {path}: not a readable .npy array ({e})") from None


def _load_torch(path: Path, data: bytes) -> Any:
    try:
        import torch
    except ImportError:
        raise UsageError(
            f"--token-freq {path}: reading a .pt file needs torch (pip install torch); or "
            "save the counts as .npy or .json"
        ) from None
    try:
        import io

        value = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as e:  # pickle, zip and weights-only errors all land here
        raise InputError(
            f"--token-freq {path}: torch.load(weights_only=True) refused it "
            f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
        ) from None
    if isinstance(value, torch.Tensor):
        return value.detach().to(torch.float64).numpy()
    return value


def _to_vector(raw: Any, path: Path, vocab_size: int):
    np = _numpy()
    counts = np.zeros(vocab_size, dtype=np.float64)
    if isinstance(raw, dict):
        for key, value in raw.items():
            token = _token_id(key)
            if token is None:
                raise InputError(
                    f"--token-freq {path}: key {key!r} is not a token id (a non-negative integer)"
                )
            if token >= vocab_size:
                raise InputError(
                    f"--token-freq {path}: token id {token} is outside the verifier vocabulary "
                    f"of {vocab_size:,} tokens; were the counts made with another tokenizer?"
                )
            counts[token] += _count(value, path, f"the count of token {token}")
        return counts
    if isinstance(raw, list) or getattr(raw, "ndim", None) == 1:
        if len(raw) > vocab_size:  # before any conversion: nothing larger is built
            raise InputError(
                f"--token-freq {path}: {len(raw):,} counts for a verifier vocabulary of "
                f"{vocab_size:,} tokens; were the counts made with another tokenizer?"
            )
        values = raw if isinstance(raw, list) else raw.tolist()
        if len(values) > vocab_size:
            raise InputError(
                f"--token-freq {path}: {len(values):,} counts for a verifier vocabulary of "
                f"{vocab_size:,} tokens; were the counts made with another tokenizer?"
            )
        for i, value in enumerate(values):
            counts[i] = _count(value, path, f"entry {i}")
        return counts
    shape = getattr(raw, "shape", None)
    what = f"an array of shape {tuple(shape)}" if shape is not None else type(raw).__name__
    raise InputError(
        f"--token-freq {path}: holds {what}; expected a {{token_id: count}} map or a 1-D "
        "list of counts indexed by token id"
    )


def _token_id(key: Any) -> int | None:
    if isinstance(key, bool):
        return None
    if isinstance(key, int):
        return key if key >= 0 else None
    if hasattr(key, "item") and not isinstance(key, str):  # a 0-d tensor or numpy scalar
        key = key.item()
        return key if isinstance(key, int) and key >= 0 else None
    if isinstance(key, str) and key.isdigit():
        return int(key)
    return None


def _count(value: Any, path: Path, where: str) -> float:
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"--token-freq {path}: {where} is {value!r}, not a number")
    if not math.isfinite(value) or value < 0:
        raise InputError(f"--token-freq {path}: {where} is {value!r}; counts are finite and >= 0")
    return float(value)
