"""``specfmt convert`` as a function: read the source, plan, check, write, validate, publish.

>>> result = convert("eagle3-src/", "out/", request)  # doctest: +SKIP

The source is read header-only (``config.json`` and the safetensors headers); its kind
(``spec_format/convert/sources/``) plans the conversion. The plan's config is brought to the
target format version (``migrate``) and given the defaults readers disagree on (``fix``);
then every planned tensor is checked against the tensor contract of the output config, here
for every kind: a tensor the contract does not know refuses the conversion (``--allow-lossy``
drops it, and the report says so), as does a shape or dtype the contract does not expect, or
a required tensor the source lacks. Only then is anything written, into a temporary
directory that ``validate`` (schema, contract, ``--deep`` data checks when numpy is present,
the verifier when given) must pass before it is renamed to DEST.
"""

from __future__ import annotations

import copy
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from spec_format.base.errors import ExitCode, InputError, SpecfmtError, UsageError
from spec_format.convert.numbers import refuse_non_integers
from spec_format.convert.plan import (
    ConvertRefused,
    Origin,
    Plan,
    Provenance,
    Request,
    Source,
    TensorMove,
)
from spec_format.facts import catalog, pairing
from spec_format.parsers import documents, outfile
from spec_format.parsers.documents import CONFIG_NAME
from spec_format.rewrites import rewrite
from spec_format.rewrites.migration.runner import describe_loss

#: a Hugging Face model id (ORG/NAME)
HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
#: config keys that name the weights' dtype (whichever the writer's transformers uses)
DTYPE_KEYS = ("dtype", "torch_dtype")


class OutputInvalid(SpecfmtError):
    """The converted checkpoint failed validation; nothing was written (exit 1)."""

    exit_code = int(ExitCode.FINDINGS)

    def __init__(self, message: str, report) -> None:
        super().__init__(message)
        self.report = report


@dataclass
class ConvertResult:
    source: str
    destination: str
    plan: Plan
    format_version: str
    written: bool = False
    files: list[tuple[str, int]] = field(default_factory=list)
    validation: Any = None  # FileReport of the converted checkpoint (None: dry run)

    def to_dict(self) -> dict[str, Any]:
        kind = self.plan.kind
        return {
            "source": self.source,
            "destination": self.destination,
            "kind": kind,
            "format_version": self.format_version,
            "written": self.written,
            "config": self.plan.config,
            "provenance": [p._asdict() for p in self.plan.provenance],
            "tensors": [
                {
                    "sources": list(m.sources),
                    "target": m.target,
                    "op": m.op,
                    "reason": m.reason,
                    **({"axis": m.axis} if m.op in ("stack", "cat") else {}),
                    **({"derive": m.derive} if m.op == "derive" else {}),
                    **({"shape": list(m.shape)} if m.shape is not None else {}),
                }
                for m in self.plan.moves
            ],
            "notes": list(self.plan.notes),
            "lossy": list(self.plan.lossy),
            "files": [{"name": n, "bytes": b} for n, b in self.files],
            "validation": self.validation.to_dict() if self.validation is not None else None,
        }


def load_source(path: str | os.PathLike[str]) -> Source:
    """The source checkpoint, header only; unreadable weights are an input error (exit 3)."""
    from spec_format.parsers.checkpoint import load_checkpoint

    if os.fspath(path).startswith("hf://"):
        raise UsageError(
            f"{path}: convert reads a local checkpoint (it copies every tensor); download it "
            "first, e.g. `huggingface-cli download ORG/NAME --local-dir DIR`"
        )
    directory = Path(path)
    if not directory.is_dir():
        directory = directory.parent if directory.exists() else directory
    if not directory.is_dir():
        raise InputError(f"{path}: no such checkpoint directory")
    config = documents.read_config(directory / CONFIG_NAME, rewritable=False).data
    checkpoint = load_checkpoint(directory)
    try:
        if not checkpoint.has_weights:
            raise InputError(f"{directory}: no model.safetensors (or index and shards) to convert")
        broken = [i for i in checkpoint.issues if i.rule != "header-padding"]
        if broken or not checkpoint.complete:
            first = broken[0].message if broken else "some weights could not be read"
            raise InputError(
                f"{directory}: the source weights are broken ({first}); `specfmt validate "
                f"{directory}/model.safetensors` lists every problem"
            )
        tensors = dict(checkpoint.tensors)
    finally:
        checkpoint.close()
    return Source(path=directory, config=config, tensors=tensors)


def make_plan(source: Source, request: Request, *, tensors: bool = True) -> Plan:
    """Detect the kind, plan, bring the config to the target version, check the tensors
    (``tensors=False``: the source is a config alone, as ``validate`` may see one)."""
    from spec_format.convert.sources import detect

    kind = detect(source.config, frozenset(source.tensors), str(source.path))
    plan = kind.plan(source, request)
    plan = _to_target(plan, request)
    refuse_non_integers(plan.config, request.format_version, f"{source.path}/config.json")
    if request.dtype is not None:
        plan = _recast_config(plan, source, request.dtype)
    return check_tensors(plan, source, request) if tensors else plan


def make_request(
    *,
    verifier: str | None = None,
    verifier_name: str | None = None,
    aux_layer_ids: tuple[int, ...] | None = None,
    format_version: str | None = None,
    allow_lossy: bool = False,
    dtype: str | None = None,
) -> Request:
    """What ``specfmt convert`` asks for, from its options as given: the verifier read
    (a path or ``hf://``), the target format line resolved (default: the latest), the
    ``--dtype`` spelling checked; every usage error before the source is read."""
    from spec_format.convert.write import parse_dtype
    from spec_format.facts import catalog
    from spec_format.parsers.verifier import load_verifier
    from spec_format.rewrites.migration import resolve_target

    line = resolve_target(format_version)[0] if format_version else catalog.latest_version()
    return Request(
        verifier=load_verifier(verifier) if verifier else None,
        verifier_ref=verifier,
        aux_layer_ids=aux_layer_ids,
        format_version=line,
        allow_lossy=allow_lossy,
        dtype=parse_dtype(dtype) if dtype else None,
        verifier_name=verifier_name,
    )


def convert(
    src: str | os.PathLike[str] | Source,
    dest: str | os.PathLike[str] | None,
    request: Request,
    *,
    dry_run: bool = False,
    max_shard_size: int | None = None,
) -> ConvertResult:
    from spec_format.convert import write

    if dest is None and not dry_run:
        raise UsageError("convert needs -o DEST (or --dry-run)")
    target = Path(dest) if dest is not None else None
    if target is not None and not dry_run:
        outfile.check_destination(target)
    source = src if isinstance(src, Source) else load_source(src)
    plan = make_plan(source, request)
    shown = str(source.path if isinstance(src, Source) else src)
    result = ConvertResult(
        shown, str(dest) if dest is not None else "", plan, request.format_version
    )
    if dry_run or target is None:
        return result
    if max_shard_size is None:
        max_shard_size = write.SHARD_SIZE[
            catalog.version_entry(request.format_version).transformers
        ]
    tensors = write.output_tensors(plan, source.tensors, request.dtype)
    target = outfile.resolve_destination(target)
    try:  # through the one writer: a temporary directory next to DEST, renamed when valid
        with outfile.directory_output(target) as tmp:
            result.files = write.write_checkpoint(
                tmp, source.path, plan.config, tensors, max_shard_size=max_shard_size
            )
            result.validation = _validate(tmp, target, request)
    except OSError as exc:  # a full disk, a quota, EIO: said for DEST, not the temporary path
        from spec_format.base.oserror import advice

        raise write.WriteError(
            f"-o {dest}: could not write the converted checkpoint ({exc.strerror or exc}); "
            f"nothing was written{advice(exc)}"
        ) from None
    result.written = True
    return result


def _validate(tmp: Path, dest: Path, request: Request):
    """Validate the temporary directory as ``validate --deep --verifier`` would DEST."""
    from spec_format.base.report import Status
    from spec_format.runner.validation import Target, ValidateOptions, validate_target

    try:
        import numpy  # noqa: F401

        deep = True
    except ImportError:  # pragma: no cover - deep checks need numpy
        deep = False
    options = ValidateOptions(format_version=request.format_version, deep=deep)
    target = Target(shown=str(dest), config_path=tmp / "config.json", checkpoint_dir=tmp)
    report = validate_target(target, options, request.verifier)
    # findings name DEST, where the files will be, not the temporary directory
    shown = [replace(f, file=f.file.replace(str(tmp), str(dest))) for f in report.findings]
    report.findings = shown
    if report.status is not Status.OK:
        errors = [f for f in shown if f.severity.value == "error"]
        lines = "; ".join(f"{f.rule} {f.message}" for f in errors[:5])
        raise OutputInvalid(
            f"the converted checkpoint fails validation ({len(errors)} error"
            f"{'s' if len(errors) != 1 else ''}: {lines}); nothing was written",
            report,
        )
    return report


# -- the config: target version and explicit defaults ------------------------------------------
def _to_target(plan: Plan, request: Request) -> Plan:
    """The plan's config in the target format with the disputed defaults written: the
    rewrite pipeline's :func:`spec_format.rewrites.rewrite.to_version`, each change recorded."""
    provenance = list(plan.provenance)
    notes = list(plan.notes)
    verifier = request.verifier.config if request.verifier is not None else None
    line = request.format_version
    done = rewrite.to_version(
        copy.deepcopy(plan.config), line, verifier=verifier, allow_lossy=request.allow_lossy
    )
    result = done.migrated
    if result is not None:
        if result.target_errors:
            raise ConvertRefused(
                f"the config cannot be written for format {line}: "
                + "; ".join(result.target_errors[:3])
            )
        provenance += [
            Provenance(c.pointer, "derived", f"migrate to {line}: {c.why}") for c in result.changes
        ]
        notes += [f"format {line}: {p.message}" for p in result.problems if not p.lossy]
        lossy = [*plan.lossy, *(describe_loss(x) for x in result.losses)]
        plan = plan._replace(lossy=tuple(lossy))
    fixed = done.fixed
    assert fixed is not None  # a migration that fails the target schema was refused above
    provenance += [Provenance(c.pointer, "default", f"fix: {c.why}") for c in fixed.changes]
    notes += [p.message for p in fixed.problems]
    return plan._replace(
        config=done.document, provenance=_last_per_field(provenance), notes=tuple(notes)
    )


def _last_per_field(provenance: list[Provenance]) -> tuple[Provenance, ...]:
    """One origin per field: where a later step wrote a field again (fix over a format
    default), its record replaces the earlier one, in the earlier one's place."""
    last = {p.pointer: p for p in provenance}
    seen: set[str] = set()
    out = []
    for p in provenance:
        if p.pointer not in seen:
            seen.add(p.pointer)
            out.append(last[p.pointer])
    return tuple(out)


def _recast_config(plan: Plan, source: Source, dtype: str) -> Plan:
    from spec_format.convert.write import TORCH_NAMES

    config = copy.deepcopy(plan.config)
    name = TORCH_NAMES[dtype]
    changed = []
    for node, prefix in (
        (config, ""),
        (config.get("transformer_layer_config"), "/transformer_layer_config"),
    ):
        if isinstance(node, dict):
            for key in DTYPE_KEYS:
                if key in node:
                    node[key] = name
                    changed.append(Provenance(f"{prefix}/{key}", "flag", "--dtype"))
    return plan._replace(
        config=config,
        provenance=plan.provenance + tuple(changed),
        notes=plan.notes + (f"float tensors re-cast to {dtype} (--dtype); the others copied",),
    )


# -- the tensors against the output's contract ------------------------------------------------
def check_tensors(plan: Plan, source: Source, request: Request) -> Plan:
    """Refuse (or, with ``--allow-lossy``, drop and report) every planned tensor the output
    config's tensor contract does not expect; refuse wrong shapes, dtypes and missing
    required tensors. Returns the plan with lossy drops added."""
    from spec_format.convert.write import output_tensors
    from spec_format.facts.contract import expected_tensors, load_contract

    model_type = plan.config.get("speculators_model_type")
    expected = expected_tensors(plan.config)
    families = load_contract(str(model_type)).dtype_families
    moves: list[TensorMove] = []
    lossy = list(plan.lossy)
    for move in plan.moves:
        for name in move.sources:
            if name not in source.tensors:
                raise ConvertRefused(
                    f"{source.path}: the plan names tensor {name}, which the source lacks"
                )
        if move.op == "drop" or move.target is None:
            moves.append(move)
            continue
        why = _unexpected(move.target, expected, model_type)
        if why is not None:
            if not request.allow_lossy:
                raise ConvertRefused(
                    f"{source.path}: tensor {' + '.join(move.sources)} {why}; nothing was "
                    "written (pass --allow-lossy to drop it)"
                )
            moves.append(TensorMove(move.sources, None, "drop", f"--allow-lossy: {why}"))
            lossy.append(f"{' + '.join(move.sources)} dropped: {why}")
            continue
        moves.append(move)
    plan = plan._replace(moves=tuple(moves), lossy=tuple(lossy))
    present = set()
    for t in output_tensors(plan, source.tensors, request.dtype):
        want = expected.match(t.name)
        assert want is not None
        move = next(m for m in plan.moves if m.target == t.name)
        origin = " + ".join(move.sources)
        if move.op == "derive":
            origin = f"{t.name} (rebuilt from {origin})"
        if not want.shape_matches(t.shape):
            raise ConvertRefused(
                f"{source.path}: tensor {origin} has shape {list(t.shape)}, but the converted "
                f"config expects {t.name} to be {want.describe_shape()}; check the source "
                "config's sizes (hidden_size, heads, vocabulary, aux layer ids); nothing was written"
            )
        if t.dtype not in families.get(want.dtype, ()):
            raise ConvertRefused(
                f"{source.path}: tensor {origin} is {t.dtype}, but {t.name} must be "
                f"{want.dtype}; nothing was written"
            )
        present.add(t.name)
    missing = [t for t in expected.required if t.name not in present]
    if missing:
        names = ", ".join(t.name for t in missing)
        raise ConvertRefused(
            f"{source.path}: the converted checkpoint needs {names}, which the source does not "
            "hold; a converter that left them out would serve random weights; nothing was written"
        )
    return plan


def _unexpected(target: str, expected, model_type: str) -> str | None:
    if target in expected.absent:
        absent = expected.absent[target]
        return f"would be {target}, which {model_type} carries only when {absent.condition}"
    if expected.match(target) is None:
        return f"would be {target}, which the {model_type} tensor contract does not know"
    return None


def verifier_name(request: Request) -> tuple[str, Origin, str]:
    """What ``speculators_config.verifier.name_or_path`` says, with its origin: the
    ``--verifier-name`` flag; ORG/NAME of an ``hf://`` verifier; the ``_name_or_path`` a
    local verifier's config.json records (``save_pretrained`` writes the hub id there);
    ORG/NAME of a verifier in the Hugging Face cache (``models--ORG--NAME``). A machine
    path is no verifier name: vLLM refuses it (C007), so it is refused here (exit 2), as
    is a ``--verifier-name`` that is no repository id."""
    if request.verifier_name:
        if not HUB_ID.fullmatch(request.verifier_name):
            raise ConvertRefused(
                f"--verifier-name {request.verifier_name!r} is not a Hugging Face repository "
                "id; pass ORG/NAME (vLLM loads the verifier by that name and refuses a path); "
                "nothing was written"
            )
        return request.verifier_name, "flag", "--verifier-name"
    ref = request.verifier_ref or (str(request.verifier.path) if request.verifier else "")
    if ref.startswith("hf://"):
        return ref.removeprefix("hf://").split("@", 1)[0].rstrip("/"), "flag", "--verifier"
    recorded = request.verifier.get("_name_or_path") if request.verifier else None
    if isinstance(recorded, str) and HUB_ID.fullmatch(recorded):
        return recorded, "verifier", "_name_or_path"
    cached = pairing.identity(ref)
    if cached and "/" in cached and HUB_ID.fullmatch(cached):
        return cached, "verifier", "the Hugging Face cache folder (models--ORG--NAME)"
    raise ConvertRefused(
        f"--verifier {ref}: a local folder whose config.json records no Hugging Face id "
        "(_name_or_path), and vLLM refuses a path as the verifier's name (C007); pass "
        "--verifier-name ORG/NAME; nothing was written"
    )
