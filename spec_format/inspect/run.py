"""``specfmt inspect``: what a draft costs against its target, the acceptance it needs to pay
off, and the ceiling its draft vocabulary puts on acceptance.

Reads the draft's ``config.json`` and safetensors headers (local or ``hf://``, never a
tensor's data unless ``--token-freq`` asks for ``t2d``), the verifier's headers or config,
and puts the pieces of this package together into one :class:`InspectReport`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spec_format.base.errors import InputError, UsageError
from spec_format.base.jsonload import json_whole, spelled
from spec_format.facts import catalog
from spec_format.facts.contract import expected_tensors, has_contract, torch_dtype_name
from spec_format.facts.safetensors_dtypes import DTYPE_BITS
from spec_format.inspect import economics
from spec_format.inspect.draft_params import DraftParams, draft_params
from spec_format.inspect.target_params import HARMLESS_ISSUES, TargetParams, target_params
from spec_format.inspect.vocab_ceiling import Coverage, coverage, weigh
from spec_format.parsers import documents
from spec_format.parsers.checkpoint import (
    CONFIG_NAME,
    Checkpoint,
    TensorRecord,
    load_checkpoint,
)

#: The largest --gamma accepted (no drafter proposes more per step).
MAX_GAMMA_OPTION = 1024
PLOT_SUFFIXES = (".svg", ".png")
PROXY_LABEL = (
    "bandwidth-bound proxy: parameters one draft forward reads over parameters one verifier "
    "forward reads, not a measured time ratio"
)


@dataclass(frozen=True)
class InspectOptions:
    checkpoint: str
    verifier: str | None = None
    token_freq: Path | None = None
    acceptance: tuple[float, ...] = ()
    gammas: tuple[int, ...] = ()
    cost_ratio: float | None = None
    plot: Path | None = None


@dataclass(frozen=True)
class Point:
    acceptance: float
    tokens: float  # E(a, g)
    speedup: float | None  # None without a cost ratio
    best: economics.BestGamma | None
    ceiling: bool = False  # this acceptance is the vocabulary ceiling
    above_ceiling: bool = False  # the draft vocabulary makes it unreachable on the workload

    def to_dict(self) -> dict[str, Any]:
        return {
            "acceptance": self.acceptance,
            "expected_tokens": self.tokens,
            "speedup": self.speedup,
            "best_gamma": None if self.best is None else self.best.gamma,
            "best_speedup": None if self.best is None else self.best.speedup,
            "best_gamma_at_search_limit": None if self.best is None else self.best.at_limit,
            "is_vocabulary_ceiling": self.ceiling,
            "above_vocabulary_ceiling": self.above_ceiling,
        }


@dataclass(frozen=True)
class GammaEconomics:
    gamma: int
    source: str  # "speculative_tokens" or "--gamma"
    draft_forwards: int
    step_cost: float | None
    break_even: float | None
    pays_off: bool | None  # False: no acceptance pays for the step; None: no cost ratio
    points: tuple[Point, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "gamma": self.gamma,
            "source": self.source,
            "draft_forwards_per_step": self.draft_forwards,
            "step_cost": self.step_cost,
            "break_even_acceptance": self.break_even,
            "pays_off": self.pays_off,
            "points": [p.to_dict() for p in self.points],
        }


@dataclass
class InspectReport:
    checkpoint: str
    model_type: str
    what: str
    family: str
    draft_forwards: str  # catalog: "per_token" or "per_step"
    draft: DraftParams
    coverage: Coverage
    target: TargetParams | None
    cost_ratio: float | None
    cost_ratio_source: str | None  # "proxy" or "--cost-ratio"
    proxy_ratio: float | None
    economics: list[GammaEconomics] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    bytes_read: int = 0

    @property
    def checkpoint_gamma(self) -> GammaEconomics | None:
        return next((g for g in self.economics if g.source == "speculative_tokens"), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "checkpoint": self.checkpoint,
            "speculators_model_type": self.model_type,
            "what": self.what,
            "family": self.family,
            "draft_forwards": self.draft_forwards,
            "draft": self.draft.to_dict(),
            "vocabulary": self.coverage.to_dict(),
            "target": None if self.target is None else self.target.to_dict(),
            "cost_ratio": self.cost_ratio,
            "cost_ratio_source": self.cost_ratio_source,
            "proxy_cost_ratio": self.proxy_ratio,
            "proxy_label": PROXY_LABEL,
            "economics": [g.to_dict() for g in self.economics],
            "formulas": {
                "expected_tokens": "E(a, g) = (1 - a^(g+1)) / (1 - a)",
                "speedup": "S(a) = E(a, g) / (1 + n * c), n = draft forwards per step",
                "break_even": f"S(a*) = 1, bisection to {economics.TOLERANCE:g}",
            },
            "notes": list(self.notes),
            "bytes_read": self.bytes_read,
        }


# -- options -------------------------------------------------------------------------------


#: a draft a million times dearer than its target is a typo; beyond it the arithmetic of
#: the economics overflows to infinity
MAX_COST_RATIO = 1e6


def check_options(options: InspectOptions) -> None:
    for a in options.acceptance:
        if not (isinstance(a, float) and math.isfinite(a) and 0.0 <= a < 1.0):
            raise UsageError(f"--acceptance {a}: an acceptance rate is a number in [0, 1)")
    for g in options.gammas:
        if not 1 <= g <= MAX_GAMMA_OPTION:
            raise UsageError(
                f"--gamma {g}: speculative tokens are between 1 and {MAX_GAMMA_OPTION}"
            )
    c = options.cost_ratio
    if c is not None and not (math.isfinite(c) and 0.0 <= c <= MAX_COST_RATIO):
        raise UsageError(
            f"--cost-ratio {c}: a cost ratio is a number from 0 to {MAX_COST_RATIO:g} (the "
            "draft's cost per token over the target's)"
        )
    if options.plot is not None and options.plot.suffix.lower() not in PLOT_SUFFIXES:
        raise UsageError(
            f"--plot {options.plot}: the file name must end in {' or '.join(PLOT_SUFFIXES)}"
        )


# -- the draft -----------------------------------------------------------------------------


def _open_draft(location: str) -> tuple[Checkpoint, dict[str, Any]]:
    if not location.startswith("hf://") and not Path(location).exists():
        raise InputError(f"{location}: no such checkpoint directory")
    ckpt = load_checkpoint(location)
    try:
        data = ckpt.read_config()
    except InputError:
        ckpt.close()
        raise
    shown = ckpt.display(CONFIG_NAME)
    if data is None:
        ckpt.close()
        raise InputError(
            f"{location}: no {CONFIG_NAME}; inspect needs the draft checkpoint directory"
        )
    loaded = documents.load(Path(CONFIG_NAME), raw=data)
    fatal = [p for p in loaded.problems if p.fatal]
    if fatal or not loaded.ok:
        ckpt.close()
        problem = fatal[0] if fatal else None
        where = f":{problem.line}:{problem.column}" if problem and problem.line else ""
        message = problem.message.removeprefix(f"{CONFIG_NAME}: ") if problem else "unreadable"
        raise InputError(f"{shown}{where}: {message}; run `specfmt validate {location}`")
    if not ckpt.has_weights:  # a config alone: counted from it (ConfigOnly), said so
        return ConfigOnly(ckpt, loaded.data), loaded.data
    problems = [i for i in ckpt.issues if i.rule not in HARMLESS_ISSUES]
    if problems or not ckpt.complete:
        ckpt.close()
        first = problems[0] if problems else None
        detail = f"{first.file}: {first.message}" if first else "some weights cannot be read"
        raise InputError(f"{detail} (run `specfmt validate {location}` for every problem)")
    return ckpt, loaded.data


class ConfigOnly:
    """A draft without weights, seen as the checkpoint its config describes: every tensor
    the type's tensor contract requires, at the shape the config gives it and in the
    config's ``torch_dtype`` (BF16 when it names none; the vocabulary maps in their own
    dtypes). The parameter counts, the cost ratio and the vocabulary ceiling follow from the
    shapes alone; a report made from it says so (``from_config``)."""

    from_config = True

    def __init__(self, ckpt: Checkpoint, config: dict[str, Any]) -> None:
        self._ckpt = ckpt
        self.location = ckpt.location
        self.files: list = []
        self.tensors: dict[str, TensorRecord] = {}
        layer = config.get("transformer_layer_config")
        named = (layer or {}).get("torch_dtype") if isinstance(layer, dict) else None
        named = named or config.get("torch_dtype")
        floats = torch_dtype_name(named) if isinstance(named, str) else "BF16"
        if floats not in DTYPE_BITS or floats[0] not in "FB":
            floats = "BF16"
        for name, t in expected_tensors(config).tensors.items():
            if not t.required or not all(isinstance(d, int) and d > 0 for d in t.shape):
                continue
            dtype = floats if t.dtype == "float" else torch_dtype_name(t.dtype)
            size = math.prod(t.shape) * DTYPE_BITS.get(dtype, 8) // 8
            self.tensors[name] = TensorRecord(name, dtype, tuple(t.shape), CONFIG_NAME, 0, size)

    @property
    def bytes_read(self) -> int:
        return self._ckpt.bytes_read

    def display(self, file: str) -> str:
        return self._ckpt.display(file)

    def close(self) -> None:
        self._ckpt.close()

    def read_tensor(self, name: str, max_bytes: int) -> bytes:
        raise InputError(
            f"{self.location}: no model.safetensors (or shard index), so no values of {name} "
            "to read; inspect without --token-freq counts the draft from its config"
        )

    def __enter__(self) -> ConfigOnly:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _draft_type(config: dict[str, Any], shown: str) -> catalog.TypeRecord:
    model_type = config.get("speculators_model_type")
    rec = catalog.record(model_type)
    if rec is None or rec.family == "legacy" or not has_contract(model_type):
        known = ", ".join(catalog.current_types())
        raise InputError(
            f"{shown}: speculators_model_type {model_type!r} is not a type inspect knows "
            f"({known}); run `specfmt validate` on it"
        )
    return rec


_SPEC_TOKENS = "speculators_config.proposal_methods[0].speculative_tokens"


def _speculative_tokens(config: dict[str, Any]) -> tuple[int | None, str]:
    """``proposal_methods[0].speculative_tokens``: what vLLM serves with; None with the
    reason when it is absent or no count of tokens (``1e20``, ``3.5``, ``0``, ``"3"``)."""
    spec = config.get("speculators_config")
    methods = spec.get("proposal_methods") if isinstance(spec, dict) else None
    first = methods[0] if isinstance(methods, list) and methods else None
    if not isinstance(first, dict) or "speculative_tokens" not in first:
        return None, f"the config has no {_SPEC_TOKENS}"
    raw = first["speculative_tokens"]
    value = json_whole(raw, low=1)  # 3.0 is 3, as the schema reads it
    if value is None:
        return None, (
            f"{_SPEC_TOKENS} is {spelled(raw)[:60]}, not a whole number of tokens from 1 "
            "(`specfmt validate` reports it)"
        )
    return value, ""


# -- putting it together -------------------------------------------------------------------


def run_inspect(options: InspectOptions) -> InspectReport:
    """The job of ``specfmt inspect``: the options checked (and matplotlib, for ``plot``)
    before any work, the report, and the plot written through the one writer."""
    check_options(options)
    if options.plot is not None:
        from spec_format.inspect.plot import require_matplotlib

        require_matplotlib()  # before the work, not after it
    report = _report(options)
    if options.plot is not None:
        from spec_format.inspect.plot import write_plot

        write_plot(report, options.plot)
    return report


def _report(options: InspectOptions) -> InspectReport:
    ckpt, config = _open_draft(options.checkpoint)
    with ckpt:
        shown = ckpt.display(CONFIG_NAME)
        rec = _draft_type(config, shown)
        expected = expected_tensors(config)
        draft = draft_params(ckpt, expected)
        cover = coverage(ckpt, expected)
        if options.token_freq is not None:
            cover = weigh(ckpt, cover, options.token_freq)
        draft_bytes = ckpt.bytes_read

    notes = []
    target = target_params(options.verifier) if options.verifier else None
    proxy = None
    if target is not None and target.per_token > 0:
        proxy = draft.compute / target.per_token
    cost, cost_source = (
        (options.cost_ratio, "--cost-ratio") if options.cost_ratio is not None else (proxy, "proxy")
    )
    if cost is None:
        cost_source = None
        notes.append(
            "no cost ratio: pass --verifier (its config.json, weights directory or hf://ORG/NAME) "
            "or --cost-ratio C for the speedup and the break-even acceptance"
        )
    if target is not None:
        notes += _pairing_notes(expected.symbols, target, ckpt.location, options.verifier)
    if draft.source == "config":
        notes.append(
            "no weights: the parameters are those of the tensors the config's type requires, "
            "at the shapes the config gives them, in its torch_dtype; the speedup and "
            "break-even follow from them, the weights' own values are not read"
        )
    if draft.unknown:
        notes.append(
            f"{len(draft.unknown)} tensor(s) are not in the {rec.name} tensor contract (e.g. "
            f"{draft.unknown[0]}); counted as compute. `specfmt validate` reports them"
        )

    gammas: list[tuple[int, str]] = []
    own, why = _speculative_tokens(config)
    if own is not None:
        gammas.append((own, "speculative_tokens"))
    else:
        notes.append(f"{why}; economics only for --gamma")
    for g in options.gammas:
        if all(g != existing for existing, _ in gammas):
            gammas.append((g, "--gamma"))

    acceptances = sorted(set(options.acceptance or economics.DEFAULT_ACCEPTANCE))
    ceiling = cover.ceiling if cover.out_of_draft_mass is not None else None
    report = InspectReport(
        checkpoint=ckpt.location,
        model_type=rec.name,
        what=rec.what,
        family=rec.family,
        draft_forwards=rec.draft_forwards or economics.PER_TOKEN,
        draft=draft,
        coverage=cover,
        target=target,
        cost_ratio=cost,
        cost_ratio_source=cost_source,
        proxy_ratio=proxy,
        notes=notes,
        bytes_read=draft_bytes + (target.bytes_read if target else 0),
    )
    for g, source in gammas:
        report.economics.append(
            gamma_economics(g, source, cost, report.draft_forwards, acceptances, ceiling)
        )
    return report


def _pairing_notes(symbols, target: TargetParams, draft: str, verifier: str) -> list[str]:
    """A verifier that does not fit the draft makes the ratio meaningless: say so, with the
    command that checks the pairing (both paths filled in)."""
    import shlex

    check = f"`specfmt validate {shlex.quote(str(draft))} --verifier {shlex.quote(verifier)}`"
    out = []
    for symbol, key, what in (
        ("Ht", "hidden_size", "hidden size"),
        ("V", "vocab_size", "vocabulary"),
    ):
        mine, theirs = symbols.get(symbol), getattr(target, key)
        if isinstance(mine, int) and isinstance(theirs, int) and mine != theirs:
            out.append(
                f"the verifier's {key} is {theirs:,} but the draft expects a {what} of "
                f"{mine:,}: is it the draft's verifier? {check} checks the pairing"
            )
    return out


def gamma_economics(
    g: int,
    source: str,
    c: float | None,
    mode: str,
    acceptances: list[float],
    ceiling: float | None,
) -> GammaEconomics:
    points = []
    values = [(a, False) for a in acceptances]
    if ceiling is not None and ceiling < 1.0:
        values.append((ceiling, True))
    for a, is_ceiling in sorted(values):
        points.append(
            Point(
                acceptance=a,
                tokens=economics.expected_tokens(a, g),
                speedup=None if c is None else economics.speedup(a, g, c, mode),
                best=None if c is None else economics.best_gamma(a, c, mode),
                ceiling=is_ceiling,
                above_ceiling=ceiling is not None and a > ceiling,
            )
        )
    star = None if c is None else economics.break_even(g, c, mode)
    return GammaEconomics(
        gamma=g,
        source=source,
        draft_forwards=economics.draft_forwards(g, mode),
        step_cost=None if c is None else economics.step_cost(g, c, mode),
        break_even=star,
        pays_off=None if c is None else star is not None,
        points=tuple(points),
    )
