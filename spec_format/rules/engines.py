"""Reader rules (C layer): what the executed readers make of a config.

Every fact here comes from the reader table (``schema/readers/``, checked against each
reader release by the ``readers`` test group): which types a release serves, which
verifier forms and top-level keys it refuses, what it reads for each field. The engines are
the ones named with ``--engine NAME==VERSION``; without it the newest release of each
covered engine is assumed (and the run's notes say so), and what those refuse is reported
as a warning instead of an error.
"""

from __future__ import annotations

from collections.abc import Iterator

from spec_format import catalog, disputes
from spec_format.report import Severity
from spec_format.rules.base import Context, Hit, Layer, Rule


class _ReaderRule(Rule):
    abstract = True
    layer = Layer.CONSUMER


def named_engines(ctx: Context) -> tuple:
    return tuple(ctx.options.get("engines") or ())


def engines(ctx: Context) -> tuple:
    """The engines the draft is judged against: the named ones, else the assumed ones."""
    return named_engines(ctx) or disputes.assumed_engines()


def _assumed_refusals(ctx: Context, kind: str) -> list[disputes.Refusal]:
    """Refusals of one kind by the assumed engines (none when engines are named: C012)."""
    if named_engines(ctx):
        return []
    found = disputes.rejections(ctx.config, disputes.assumed_engines())
    return [r for r in found if r.kind == kind]


def _fix_hint(ctx: Context) -> str:
    named = " ".join(f"--engine {e.id}" for e in engines(ctx))
    return f"`specfmt fix {named} {ctx.config_path}`"


class ReadersDisagree(_ReaderRule):
    """The writer and an engine read a field differently.

    ## What it checks
    For every field of the reader table, the value the writer (the speculators release of
    the file's format version) reads and the value each engine reads (`--engine`, or the
    newest covered release of each engine) mean the same: the same value, or for DFlash
    `sliding_window_non_causal` the same attention in every draft layer.

    ## Why it matters
    The checkpoint loads everywhere and runs a different draft in each engine; only the
    acceptance rate shows it. vLLM reads an absent eagle3 `norm_before_residual` as true
    (speculators: false), an absent DSpark `sample_from_anchor` as false (speculators:
    true), and `sliding_window_non_causal: false` as causal attention in every layer
    (speculators: only in sliding-window layers).

    ## Example
    ```json
    {"speculators_model_type": "eagle3", "speculators_version": "0.9.0"}
    ```
    (no `norm_before_residual`).

    ## Use instead
    ```json
    {"speculators_model_type": "eagle3", "speculators_version": "0.9.0", "norm_before_residual": false}
    ```
    with the value the draft was trained with; `specfmt fix --engine vllm==0.33.0` writes the
    value under which every named engine reads what the writer meant, and names the fields
    no value can reconcile.

    ## References
    vllm-project/vllm#50170, lightseekorg/tokenspeed#526, vllm-project/speculators#760,
    sgl-project/sglang-jax#1619
    """

    id = "C001"
    name = "implicit-default-disagreement"
    severity = Severity.WARNING
    since = "0.1.0"
    references = (
        "vllm-project/vllm#50170",
        "lightseekorg/tokenspeed#526",
        "vllm-project/speculators#760",
        "sgl-project/sglang-jax#1619",
    )

    def check(self, ctx: Context) -> Iterator[Hit]:
        writer = disputes.writer_of(ctx.format_version)
        if writer is None:
            return
        aux = catalog.aux_key(ctx.model_type)
        meant = disputes.view(writer, ctx.model_type, aux, ctx.config) if aux else None
        if meant is not None and meant.how in ("absent", "null") and meant.value is None:
            others = [
                v
                for e in engines(ctx)
                if e.serves(ctx.model_type)
                and (v := disputes.view(e, ctx.model_type, aux, ctx.config)) is not None
            ]
            yield Hit(
                f"{aux} is {meant.how}, so every reader picks the verifier layers itself "
                f"({disputes.describe([meant, *others])}: the default layers of the "
                "verifier); write the ids the draft was trained with "
                f"(`specfmt fix --verifier DIR {ctx.config_path}` writes the default ones)",
                pointer=f"/{aux}",
            )
        for d in disputes.disputes(ctx.config, ctx.model_type, writer, engines(ctx)):
            state = "absent" if d.field not in ctx.config else f"{disputes.show(d.meant.value)}"
            yield Hit(
                f"{d.field} is {state} and readers act differently on it ({d.describe()}); "
                f"{_fix_hint(ctx)} writes the value every reader reads the same, or names "
                "the disagreement no value removes",
                pointer=d.pointer,
            )


class VerifierNotAHubId(_ReaderRule):
    """`verifier.name_or_path` is not a model repository id that engines accept.

    ## What it checks
    The verifier is named by a Hugging Face id (`Qwen/Qwen3-8B`), not `null`, a local
    path (`/models/...`, `./x`) or an object-store URL (`s3://...`), for the engines the
    reader table says refuse such names.

    ## Why it matters
    vLLM 0.33 refuses to serve the draft ("Speculators verifier must name a remote model
    repository"); speculators loads the verifier (config and embeddings) from this name,
    so on another machine a path fails or picks up whatever is there.

    ## Example
    ```json
    {"speculators_config": {"verifier": {"name_or_path": "/model/from_s3", "architectures": ["Qwen3MoeForCausalLM"]}}}
    ```

    ## Use instead
    ```json
    {"speculators_config": {"verifier": {"name_or_path": "Qwen/Qwen3-30B-A3B", "architectures": ["Qwen3MoeForCausalLM"]}}}
    ```

    ## References
    vllm-project/speculators#1065
    """

    id = "C007"
    name = "verifier-path-not-portable"
    severity = Severity.WARNING
    since = "0.1.0"
    references = ("vllm-project/speculators#1065",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        refused = _assumed_refusals(ctx, "verifier")
        if refused:
            who = ", ".join(r.engine.id for r in refused)
            verb = "refuses" if len(refused) == 1 else "refuse"
            yield Hit(
                f"verifier.name_or_path is not a model repository id: {who} {verb} it "
                f"({refused[0].message}); write the verifier's Hugging Face id (ORG/NAME)",
                pointer=refused[0].pointer,
            )


class TopLevelKeyRefused(_ReaderRule):
    """The config has a top-level key an engine refuses (`model_type`).

    ## What it checks
    No top-level key that a reader release refuses: a `model_type` at the top level (it
    belongs in `transformer_layer_config`).

    ## Why it matters
    vLLM takes a top-level `model_type` for a plain model of that type and does not read
    the file as a speculators draft; speculators releases up to 0.4 fail to load it.

    ## Example
    ```json
    {"model_type": "llama", "speculators_model_type": "eagle3"}
    ```

    ## Use instead
    ```json
    {"speculators_model_type": "eagle3", "transformer_layer_config": {"model_type": "llama"}}
    ```
    """

    id = "C008"
    name = "top-level-model-type"
    severity = Severity.WARNING
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        by_pointer: dict[str, list[disputes.Refusal]] = {}
        for refusal in _assumed_refusals(ctx, "top-level"):
            by_pointer.setdefault(refusal.pointer, []).append(refusal)
        for pointer, refusals in by_pointer.items():
            who = ", ".join(r.engine.id for r in refusals)
            yield Hit(
                f"top-level {pointer[1:]} is refused by {who} ({refusals[0].message}); remove "
                "it (the decoder family belongs in transformer_layer_config.model_type)",
                pointer=pointer,
            )


class TypeNotServed(_ReaderRule):
    """An engine does not serve this `speculators_model_type`.

    ## What it checks
    The type is one the assumed engines read (the reader table's accepted types).

    ## Why it matters
    vLLM 0.33 serves eagle3, peagle, dflash, dflash2 and dspark only: an mtp or xpress
    draft fails there with "Expected one of ...", and older releases know fewer types.

    ## Example
    ```json
    {"speculators_model_type": "xpress"}
    ```

    ## Use instead
    Nothing to change in the file: serve the draft with a reader that knows the type, or
    check with `specfmt validate --engine NAME==VERSION` against the engine you deploy.
    """

    id = "C011"
    name = "type-needs-recent-reader"
    severity = Severity.INFO
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        refused = _assumed_refusals(ctx, "type")
        if refused:
            yield Hit(
                f"{ctx.model_type} is not served by {', '.join(r.engine.id for r in refused)}; "
                "name the engine you deploy with --engine NAME==VERSION to check it",
                pointer=refused[0].pointer,
            )


class EngineRejects(_ReaderRule):
    """A named engine refuses the config.

    ## What it checks
    For each engine named with `--engine NAME==VERSION`, nothing the reader table says that
    release refuses: an unserved type, a verifier that is not a repository id, a top-level
    `model_type`, a missing key it indexes, a value it cannot build.

    ## Why it matters
    The draft would fail to load in the engine it is deployed with; better to know before
    a GPU is allocated.

    ## Example
    ```json
    {"speculators_model_type": "mtp"}
    ```
    checked with `--engine vllm==0.33.0`.

    ## Use instead
    A config the engine reads, or an engine release that reads this one.
    """

    id = "C012"
    name = "engine-rejects"
    severity = Severity.ERROR
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        for r in disputes.rejections(ctx.config, named_engines(ctx)):
            yield Hit(f"{r.engine.id} refuses this config: {r.message}", pointer=r.pointer)


class AssumedEngineRejects(_ReaderRule):
    """An assumed engine refuses the config for a reason no other rule names.

    ## What it checks
    Without `--engine`, the newest covered release of each engine: keys it indexes
    (`mask_token_id`, `aux_hidden_state_layer_ids`, ...), values it cannot build.

    ## Why it matters
    The draft fails to load there; name your engine with `--engine` to make it an error, or
    to check a release that reads the file.

    ## Example
    ```json
    {"speculators_model_type": "peagle", "transformer_layer_config": {"model_type": "mistral"}}
    ```

    ## Use instead
    ```json
    {"speculators_model_type": "peagle", "transformer_layer_config": {"model_type": "llama"}}
    ```
    """

    id = "C013"
    name = "assumed-engine-rejects"
    severity = Severity.WARNING
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        for r in _assumed_refusals(ctx, "other"):
            yield Hit(f"{r.engine.id} refuses this config: {r.message}", pointer=r.pointer)


class FeatureIgnoredByOldReaders(_ReaderRule):
    """A flag is enabled that some reader releases ignore without a warning.

    ## What it checks
    For every field set to true, the covered reader releases that serve the type but never
    read the field (the reader table's `ignored` rows) are named.

    ## Why it matters
    Such a release loads the draft, runs it without the feature, and acceptance degrades
    with no error (gpt-oss drafts with norm_before_fc; Eagle 3.1 drafts with
    fc_norm/norm_output; P-EAGLE's fc_norm in vLLM).

    ## Example
    ```json
    {"speculators_model_type": "peagle", "fc_norm": true}
    ```

    ## Use instead
    Keep the flag; serve with a release that reads it (see the message).

    ## References
    vllm-project/vllm#38111, vllm-project/vllm#46488
    """

    id = "C005"
    name = "feature-ignored-by-old-readers"
    severity = Severity.INFO
    since = "0.1.0"
    references = ("vllm-project/vllm#38111", "vllm-project/vllm#46488")

    def check(self, ctx: Context) -> Iterator[Hit]:
        covered = disputes.covered()
        for key, value in ctx.config.items():
            if value is not True:
                continue
            ignoring = [
                r.id
                for r in covered
                if r.serves(ctx.model_type)
                and r.row(ctx.model_type, key) is not None
                and r.reading(ctx.model_type, key, ctx.config).how == "ignored"
            ]
            if ignoring:
                yield Hit(
                    f"{key} is true, but {', '.join(ignoring)} never read it and run the draft "
                    "without it; serve with a release that reads it",
                    pointer=f"/{key}",
                )
