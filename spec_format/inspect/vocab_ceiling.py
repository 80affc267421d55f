"""The ceiling a pruned draft vocabulary puts on acceptance.

A draft that keeps ``D`` of the verifier's ``V`` tokens (``t2d`` marks them) can never
propose the others, so per-position acceptance is at most the target's probability mass
inside the kept set: ``1 - m`` with ``m`` the mass outside it (seed document, section 2; the
ideal pruned draft, the target restricted to ``t2d``, attains it). The mass is weighed with
the user's workload (``--token-freq``). Without one, all we can say is how many tokens the
draft covers, from the header alone.

Only ``t2d`` is read (V bytes for a bool mask), and only with ``--token-freq``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spec_format.base.errors import InputError
from spec_format.facts.contract import ExpectedSet
from spec_format.parsers.checkpoint import Checkpoint
from spec_format.parsers.safetensors import NUMPY_DTYPES, HeaderError

#: ``t2d`` is never read past this size (a 16M-token vocabulary stored as int64).
MAX_T2D_BYTES = 128 * 1024 * 1024
#: No vocabulary is larger; a config that says so is not weighed (the counts would not fit).
MAX_VOCAB = 1 << 27


@dataclass
class Coverage:
    draft_vocab: int | None  # D
    verifier_vocab: int | None  # V
    pruned: bool  # the checkpoint holds t2d (the draft proposes from a subset)
    #: with --token-freq: the workload's mass outside the draft vocabulary
    out_of_draft_mass: float | None = None
    token_freq: str | None = None

    @property
    def ceiling(self) -> float | None:
        """Per-position acceptance ceiling: 1 - mass (1 for an unpruned draft)."""
        if not self.pruned:
            return 1.0
        return None if self.out_of_draft_mass is None else 1.0 - self.out_of_draft_mass

    def to_dict(self) -> dict[str, Any]:
        return {
            "draft_vocab_size": self.draft_vocab,
            "verifier_vocab_size": self.verifier_vocab,
            "pruned": self.pruned,
            "token_freq": self.token_freq,
            "out_of_draft_mass": self.out_of_draft_mass,
            "acceptance_ceiling": self.ceiling,
        }


def coverage(ckpt: Checkpoint, expected: ExpectedSet) -> Coverage:
    """D of V, header-only: the shapes of ``t2d``/``d2t`` when present, else the config."""
    V, D = expected.symbols.get("V"), expected.symbols.get("D")
    t2d, d2t = ckpt.tensors.get("t2d"), ckpt.tensors.get("d2t")
    if t2d is not None and len(t2d.shape) == 1:
        V = t2d.shape[0]
    if d2t is not None and len(d2t.shape) == 1:
        D = d2t.shape[0]
    V = V if isinstance(V, int) else None
    D = D if isinstance(D, int) else V
    return Coverage(draft_vocab=D, verifier_vocab=V, pruned=t2d is not None)


def weigh(ckpt: Checkpoint, cover: Coverage, token_freq: Path) -> Coverage:
    """Fill in the out-of-draft mass of the workload in ``token_freq``."""
    from spec_format.inspect.token_freq import load_token_counts

    if cover.verifier_vocab is None:
        raise InputError(
            f"{ckpt.location}: the verifier vocabulary size is unknown (no t2d, no "
            "transformer_layer_config.vocab_size); cannot index the token counts"
        )
    if cover.verifier_vocab > MAX_VOCAB:
        raise InputError(
            f"{ckpt.location}: a verifier vocabulary of {cover.verifier_vocab:,} tokens is not "
            "plausible; fix transformer_layer_config.vocab_size (`specfmt validate` checks it)"
        )
    counts = load_token_counts(token_freq, cover.verifier_vocab)
    cover.token_freq = str(token_freq)
    if not cover.pruned:
        cover.out_of_draft_mass = 0.0
        return cover
    mask = read_t2d(ckpt)
    total = float(counts.sum())
    cover.out_of_draft_mass = float(counts[~mask].sum()) / total
    return cover


def read_t2d(ckpt: Checkpoint):
    """``t2d`` as a numpy bool mask (reads that tensor's bytes, nothing else)."""
    import numpy as np

    record = ckpt.tensors["t2d"]
    where = ckpt.display(record.file)
    numpy_dtype = NUMPY_DTYPES.get(record.dtype)
    if len(record.shape) != 1 or numpy_dtype is None or record.dtype[0] == "F":
        raise InputError(
            f"{where}: t2d is {record.dtype} {list(record.shape)}, not a 1-D bool mask; "
            f"run `specfmt validate {ckpt.location} --deep`"
        )
    try:
        raw = ckpt.read_tensor("t2d", MAX_T2D_BYTES)
    except ValueError as e:
        raise InputError(f"{where}: t2d not read: {e}") from None
    except HeaderError as e:
        raise InputError(f"{where}: t2d not read: {e.message}") from None
    return np.frombuffer(raw, dtype=numpy_dtype) != 0
