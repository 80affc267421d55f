"""Which engine releases serve a draft: per release group of the reader table, whether the
release serves the draft as trained, serves it degraded, or refuses it.

Every answer comes from the reader table (no probe runs): a release *refuses* the draft when
its config reader refuses the config (an unserved type, a key it indexes, a value it cannot
build: :func:`disputes.rejections`) or its draft class cannot load the draft's tensors
(:func:`engine_load.predict`: ``fc`` sized for another number of aux hidden states, a tensor
it never builds); it serves the draft *degraded* when it loads it but computes something
other than the writer meant: a trained flag it never reads (:mod:`unread`), a field it reads
as another value (:func:`disputes.disputes`), a tensor it skips or a parameter the draft lacks
(left at its initial value); otherwise it serves it *as trained*. The draft's tensors are
the checkpoint's when they are known, else the ones its config implies.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from spec_format.facts import catalog, disputes, readers, unread, versions
from spec_format.facts.engine_load import implied, module_fails, predict

AS_TRAINED = "as trained"
DEGRADED = "degraded"
REFUSES = "refuses"
VERDICTS = (AS_TRAINED, DEGRADED, REFUSES)


@dataclass(frozen=True)
class Reason:
    """Why a release refuses or degrades the draft."""

    pointer: str | None  # the config field (JSON pointer), when one is to blame
    tensor: str | None  # the tensor, when one is to blame
    text: str  # what the release does, in a few words
    detail: str = ""  # the release's own words (its error message), when it has them

    @property
    def subject(self) -> str:
        """The field or tensor, as a user names it."""
        if self.tensor:
            return self.tensor
        return (self.pointer or "").lstrip("/").replace("/", ".") or "config"

    def as_dict(self) -> dict[str, Any]:
        return {
            "field": self.pointer,
            "tensor": self.tensor,
            "what": self.text,
            "message": self.detail or None,
        }


@dataclass(frozen=True)
class GroupServing:
    """One release group's verdict on the draft."""

    release: str  # the group's release as judged ("vllm==0.25.0")
    members: tuple[str, ...]  # every release of the group ("0.25.0", "0.25.1")
    verdict: str  # one of VERDICTS
    reasons: tuple[Reason, ...] = ()

    @property
    def span(self) -> str:
        """``"0.25.0-0.25.1"``: the group's releases."""
        first, last = self.members[0], self.members[-1]
        return first if first == last else f"{first}-{last}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "release": self.release,
            "members": list(self.members),
            "verdict": self.verdict,
            "reasons": [r.as_dict() for r in self.reasons],
        }


@dataclass(frozen=True)
class Serving:
    """The verdict of every release group asked on one draft."""

    model_type: str
    format_version: str
    writer: str | None  # the speculators release whose reading is what the author meant
    tensors_from: str  # "checkpoint" or "config"
    groups: tuple[GroupServing, ...] = field(default_factory=tuple)

    @property
    def first_as_trained(self) -> str | None:
        """The first release (oldest group) that serves the draft as trained."""
        found = next((g for g in self.groups if g.verdict == AS_TRAINED), None)
        return f"{found.release.split('==')[0]}=={found.members[0]}" if found else None

    @property
    def none_load(self) -> bool:
        """No release asked can load the draft at all."""
        return bool(self.groups) and all(g.verdict == REFUSES for g in self.groups)

    def as_dict(self) -> dict[str, Any]:
        return {
            "speculators_model_type": self.model_type,
            "format_version": self.format_version,
            "writer": self.writer,
            "tensors_from": self.tensors_from,
            "first_as_trained": self.first_as_trained,
            "groups": [g.as_dict() for g in self.groups],
        }


def covered_groups(name: str = "vllm") -> tuple[readers.Release, ...]:
    """One release per covered group of engine ``name`` (its representative), oldest first."""
    return tuple(
        readers.release(*rid.split("=="))
        for rid in readers.representatives()
        if rid.startswith(f"{name}==")
    )


def refusals(
    config: dict[str, Any],
    model_type: str,
    release: readers.Release,
    tensors: Iterable[str] | None = None,
) -> list[Reason]:
    """Why ``release`` cannot load the draft: its config reader's refusals, then the tensors
    its draft class fails on (empty: it loads)."""
    out = _reader_refusals(config, model_type, release)
    if out:
        return out
    weights = release.data.get("models", {}).get(model_type, {}).get("weights")
    if weights:
        load = predict(release, weights, model_type, config, _names(config, tensors))
        for tensor, pointer, why in load.fails:
            if tensor == "fc.weight" and why.startswith("takes "):
                text = (
                    f"sized for {load.fc_sized} aux hidden states, the draft has {why.split()[1]}"
                )
                said = weights.get("shape_error", "")
            elif why == "requires it":
                text, said = "requires it; the draft lacks it", weights["required"][tensor]
            else:
                text, said = why, weights.get("unknown_tensor", "")
            out.append(Reason(pointer, tensor, text, said))
    return out


def _reader_refusals(
    config: dict[str, Any],
    model_type: str,
    release: readers.Release,
    rejected: list[disputes.Refusal] | None = None,
) -> list[Reason]:
    """What the release's config reader refuses, in its own words (``rejected``: its
    :func:`disputes.rejections`, when the caller has them)."""
    if rejected is None:
        rejected = disputes.rejections(config, [release])
    return [
        Reason(
            r.pointer,
            None,
            f"does not serve {model_type}" if r.kind == "type" else "refuses it",
            r.message,
        )
        for r in rejected
    ]


def config_refusals(
    config: dict[str, Any],
    model_type: str,
    release: readers.Release,
    rejected: list[disputes.Refusal] | None = None,
) -> list[Reason]:
    """The refusals of :func:`refusals` that need no tensor contract: the config reader's,
    ``fc`` sized for another number of aux hidden states than the config lists (every type
    with a weights block has an ``fc``), and an optional module the config turns on with a
    ``true`` flag that the release never builds or builds under a flag it does not pass on.
    ``rejected``: the release's :func:`disputes.rejections` of ``config``, when known."""
    out = _reader_refusals(config, model_type, release, rejected)
    if out:
        return out
    weights = release.data.get("models", {}).get(model_type, {}).get("weights")
    if weights:
        sized = readers.fc_aux_layers(release, weights, model_type, config)
        aux = catalog.aux_key(model_type)
        wants = readers.aux_count(config.get(aux)) if aux else 3
        if sized is not None and sized != wants:
            out.append(
                Reason(
                    f"/{aux}" if aux else None,
                    "fc.weight",
                    f"sized for {sized} aux hidden states, the draft has {wants}",
                    weights.get("shape_error", ""),
                )
            )
        for pattern, pointer, why in module_fails(release, weights, model_type, config):
            out.append(Reason(pointer, pattern, why, weights.get("unknown_tensor", "")))
    return out


def degradations(
    config: dict[str, Any],
    model_type: str,
    writer: readers.Release | None,
    release: readers.Release,
    tensors: Iterable[str] | None = None,
) -> list[Reason]:
    """What ``release`` serves differently from what the draft was trained with (it loads)."""
    out: list[Reason] = []
    if writer is not None:
        for u in unread.trained_flags_unread(config, model_type, writer, (release,)):
            out.append(Reason(u.pointer, None, "never reads it", u.describe()))
        for d in disputes.disputes(config, model_type, writer, (release,)):
            got = d.others[0]
            out.append(
                Reason(
                    d.pointer,
                    None,
                    f"reads {disputes.show(got.value)}, trained {disputes.show(d.meant.value)}"
                    if not d.same_value
                    else "applied to other layers than trained",
                    d.describe(),
                )
            )
    weights = release.data.get("models", {}).get(model_type, {}).get("weights")
    if weights:
        load = predict(release, weights, model_type, config, _names(config, tensors))
        for tensor, flag in load.dropped.items():
            if flag is not None and config.get(flag) is True:
                out.append(Reason(f"/{flag}", tensor, "skips it"))
        for tensor, (pointer, _why) in load.initial.items():
            out.append(Reason(pointer, tensor, "left at its initial value"))
    return out


def verdict(
    config: dict[str, Any],
    model_type: str,
    writer: readers.Release | None,
    release: readers.Release,
    tensors: Iterable[str] | None = None,
) -> GroupServing:
    """``release``'s verdict on the draft."""
    members = tuple(release.members)
    refused = refusals(config, model_type, release, tensors)
    if refused:
        return GroupServing(release.id, members, REFUSES, tuple(refused))
    degraded = degradations(config, model_type, writer, release, tensors)
    return GroupServing(release.id, members, DEGRADED if degraded else AS_TRAINED, tuple(degraded))


def serving(
    config: dict[str, Any],
    releases: Sequence[readers.Release] | None = None,
    tensors: Iterable[str] | None = None,
    format_version: str | None = None,
) -> Serving:
    """The verdict of each release (default: every covered vLLM release group) on a draft's
    config and, when known, its tensor names. The format version is detected from the config
    unless given."""
    model_type = config.get("speculators_model_type")
    model_type = model_type if isinstance(model_type, str) else ""
    line = format_version or versions.detect(config).line
    writer = disputes.writer_of(line)
    names = None if tensors is None else tuple(tensors)
    asked = covered_groups() if releases is None else tuple(releases)
    return Serving(
        model_type,
        line,
        writer.id if writer else None,
        "config" if names is None else "checkpoint",
        tuple(verdict(config, model_type, writer, r, names) for r in asked),
    )


def _names(config: dict[str, Any], tensors: Iterable[str] | None) -> set[str]:
    return implied(config) if tensors is None else set(tensors)
