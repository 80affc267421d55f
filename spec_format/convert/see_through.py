"""The reader ``validate`` sees third-party drafts through: the conversion plan of
``specfmt convert``, built in memory (nothing is written), as a
:class:`~spec_format.runner.source_readers.SeenThrough`.

It registers itself with the runner's registry when imported (the package root imports it
on the runner's first look; see :mod:`spec_format.runner.source_readers` for why the
engine cannot import it). For each checkpoint a convert source kind detects, it plans the
conversion as ``specfmt convert --verifier V`` would (the latest format version, no
``--aux-layer-ids``) and hands over the converted config, the converted tensor table (each
output tensor with the source tensors it is made from) and, for every config value that
came from a key of the source config, that key's pointer, so findings land on the source.
Where convert refuses, the refusal is the verdict, and the view is built as the engines would
read the draft where that is defined: without aux layer ids in the source, with the readers'
default ids for the verifier; tensors convert does not know are dropped (as
``--allow-lossy`` would); the verdict says what was assumed, so the rest is checked.

Base models with native MTP layers (the ``native-mtp`` kind) are not seen through here:
S006 names them and what convert extracts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from spec_format.base.errors import SpecfmtError
from spec_format.convert.plan import Plan, Request, Source
from spec_format.convert.run import make_plan, verifier_name
from spec_format.convert.sources import kinds
from spec_format.facts import catalog
from spec_format.facts.effective import reader_default_aux_ids
from spec_format.parsers.checkpoint import TensorRecord
from spec_format.parsers.verifier import VerifierInfo
from spec_format.runner import source_readers
from spec_format.runner.source_readers import UNNAMED, SeenThrough

#: kinds S006 speaks for (a base model, not a draft)
NOT_SEEN = frozenset({"native-mtp"})
#: the plan's notes the verdict repeats: a source value the conversion replaces (the rest
#: are what ``convert --dry-run`` prints)
VERDICT_NOTES = (
    "max_position_embeddings",
    "vocab_size",
    "tie_word_embeddings",
    "architectures",
    "eagle_aux_hidden_state_layer_ids",
    "eagle_config.",
)
#: a provenance detail that is a key path of the source config (``eagle_config.head_dim``)
_KEY_PATH = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*")


def read(
    config: Mapping[str, Any],
    tensors: Mapping[str, TensorRecord] | None,
    verifier: VerifierInfo | None,
    where: str,
) -> SeenThrough | None:
    if "speculators_config" in config:  # a speculators config that lost its type: S001's
        return None
    names = frozenset(tensors or ())
    try:
        claimed = [k for k in kinds() if k.detect(config, names)]
    except SpecfmtError:
        return None
    if len(claimed) != 1 or claimed[0].name in NOT_SEEN:
        return None
    kind = claimed[0]
    folder = Path(where).parent
    source = Source(path=folder, config=config, tensors=dict(tensors or {}))
    request = Request(
        verifier=verifier,
        verifier_ref=str(verifier.path) if verifier is not None else None,
        aux_layer_ids=None,
        format_version=catalog.latest_version(),
    )
    needs = _needs(verifier, where)
    if verifier is not None:
        try:
            verifier_name(request)
        except SpecfmtError:  # a local verifier with no hub id: convert needs the name, the
            # view does not (it never reports the verifier block convert writes)
            request = request._replace(verifier_name=UNNAMED)
            needs += " --verifier-name ORG/NAME"
    seen = SeenThrough(kind=kind.name, description=kind.description, needs=needs)
    try:
        plan = make_plan(source, request, tensors=tensors is not None)
        return _view(seen, plan, source)[0]
    except SpecfmtError as exc:
        refused = _unprefixed(str(exc), folder)
    # convert refuses: check the rest as the engines would read the draft, saying how
    assumed: list[str] = []
    guess = reader_default_aux_ids(verifier.num_hidden_layers) if verifier else None
    if "--aux-layer-ids" in refused and guess:  # no aux layer ids in the source
        request = request._replace(aux_layer_ids=tuple(guess))
        assumed.append(f"aux layer ids {guess} (the readers' default for this verifier)")
    try:  # the plan alone: tensors the contract does not know are left out of the view,
        # shapes and missing tensors are the weight rules' findings on it
        plan = make_plan(source, request, tensors=False)
        view, left_out = _view(seen, plan, source, strict=False)
    except SpecfmtError:
        return seen._replace(refused=refused)
    return view._replace(refused=refused, assumed=tuple(assumed + left_out))


def _needs(verifier: VerifierInfo | None, where: str) -> str:
    """The convert command for this checkpoint: its folder as the input names it (CKPT for
    standard input or a remote config, which convert cannot read)."""
    import shlex  # only where a verdict quotes a command

    ckpt = "CKPT" if where in ("-", "<stdin>") or where.startswith("hf://") else where
    ckpt = shlex.quote(str(Path(ckpt).parent) if ckpt.endswith("config.json") else ckpt)
    given = (
        f" --verifier {shlex.quote(str(verifier.path))}"
        if verifier is not None
        else " --verifier VERIFIER"
    )
    return f"`specfmt convert {ckpt} -o OUT{given}`"


def _unprefixed(message: str, folder: Path) -> str:
    for prefix in (f"{folder}/config.json: ", f"{folder}: "):
        message = message.replace(prefix, "")
    return message


def _view(
    seen: SeenThrough, plan: Plan, source: Source, strict: bool = True
) -> tuple[SeenThrough, list[str]]:
    """The view of ``plan``; not ``strict``: without the tensors the output's contract does
    not know (listed in the second value)."""
    from spec_format.convert.write import output_tensors
    from spec_format.facts.contract import expected_tensors

    tensors: dict[str, TensorRecord] = {}
    origins: dict[str, tuple[str, ...]] = {}
    left_out: list[str] = []
    if source.tensors:
        if not strict:
            expected = expected_tensors(plan.config)
            kept = []
            for m in plan.moves:
                if m.target is not None and (
                    m.target in expected.absent or expected.match(m.target) is None
                ):
                    left_out.append(
                        f"{' + '.join(m.sources)} left out (it would be {m.target}, which the "
                        f"{plan.config.get('speculators_model_type')} tensor contract does not "
                        "know)"
                    )
                    continue
                kept.append(m)
            plan = plan._replace(moves=tuple(kept))
        sources = {m.target: m.sources for m in plan.moves if m.target is not None}
        for out in output_tensors(plan, source.tensors):
            first = source.tensors[sources[out.name][0]]
            end = first.begin + out.nbytes
            tensors[out.name] = TensorRecord(
                out.name, out.dtype, tuple(out.shape), first.file, first.begin, end
            )
            origins[out.name] = sources[out.name]
    pointers = {}
    for p in plan.provenance:
        if p.origin != "source":
            continue
        key = p.detail.split(" ", 1)[0]
        if _KEY_PATH.fullmatch(key) and _has(source.config, key.split(".")):
            pointers[p.pointer] = "/" + key.replace(".", "/")
    view = seen._replace(
        config=plan.config,
        notes=tuple(n for n in plan.notes if n.startswith(VERDICT_NOTES)),
        tensors=tensors if source.tensors else None,
        origins=origins,
        pointers=pointers,
    )
    return view, left_out


def _has(config: Mapping[str, Any], parts: list[str]) -> bool:
    node: Any = config
    for part in parts:
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


source_readers.register(read)

# EAGLE-1 layouts are seen through after convert's kinds (nothing converts them)
from spec_format.convert import eagle1_view  # noqa: E402, F401
