"""Version rules (M): which release wrote a config, and what that release got wrong.

Detection itself lives in :mod:`spec_format.versions`; the writer-specific knowledge (builds
whose values mean something else, weights a config cannot repair) in
:mod:`spec_format.migration.eras`. These rules only turn both into findings, so ``validate``,
``migrate`` and ``fix`` never disagree about a file.
"""

from __future__ import annotations

from collections.abc import Iterator

from spec_format import versions
from spec_format.migration import eras
from spec_format.report import Severity
from spec_format.rules.base import Context, Hit, Layer, Rule


class _VersionRule(Rule):
    abstract = True
    layer = Layer.VERSION


def _detect(ctx: Context) -> versions.Detection:
    if ctx.detection is None:
        ctx.detection = versions.detect(ctx.config)
    return ctx.detection


def _problem_hits(ctx: Context, rule_id: str) -> Iterator[Hit]:
    for p in eras.problems(ctx.config):
        if p.rule == rule_id:
            yield Hit(p.message, pointer=p.pointer)


class VersionStringInvalid(_VersionRule):
    """`speculators_version` is not a version a speculators build writes.

    ## What it checks
    The string parses as PEP 440 (`X.Y.Z`, `X.Y.Z.W`, `X.Y.0.devN`, `X.Y.0aN`) and names a
    known format line (0.1 ... 0.9).

    ## Why it matters
    The version says which defaults were in force when the file was written; tools that
    migrate or explain a config read it. A string like `"1"` (seen in an engine's test
    fixture) says nothing, so the format is inferred from the keys instead.

    ## Example
    ```json
    {"speculators_version": "1"}
    ```

    ## Use instead
    ```json
    {"speculators_version": "0.9.0"}
    ```
    `specfmt migrate` writes the version of the format it produces.
    """

    id = "M001"
    name = "version-string-invalid"
    since = "0.1.0"
    severity = Severity.WARNING
    legacy_severity = Severity.INFO

    def check(self, ctx: Context) -> Iterator[Hit]:
        det = _detect(ctx)
        raw = ctx.config.get("speculators_version")
        if raw is None or (det.parsed is not None and det.declared_line is not None):
            return
        yield Hit(
            f"speculators_version {raw!r} is not a speculators version "
            f"({'; '.join(det.problems) or 'unrecognised'}); the keys say format "
            f"{det.inferred_span}. Run `specfmt migrate --to {det.line}` to stamp a real one",
            pointer="/speculators_version",
        )


class VersionMissing(_VersionRule):
    """`speculators_version` is absent, so the format version is inferred from the keys.

    ## What it checks
    The config carries `speculators_version`.

    ## Why it matters
    Every release writes it; a hand-written or stripped config without it leaves readers
    guessing which release's defaults apply. specfmt infers the version from which keys are
    present and labels it *inferred* in its reports.

    ## Example
    ```json
    {"speculators_model_type": "eagle3", "draft_vocab_size": 32000}
    ```

    ## Use instead
    ```json
    {"speculators_model_type": "eagle3", "draft_vocab_size": 32000, "speculators_version": "0.9.0"}
    ```
    """

    id = "M002"
    name = "version-missing"
    since = "0.1.0"
    severity = Severity.INFO

    def check(self, ctx: Context) -> Iterator[Hit]:
        if "speculators_version" in ctx.config:
            return
        det = _detect(ctx)
        yield Hit(
            f"no speculators_version; the keys say format {det.inferred_span} "
            f"({'; '.join(e.describe() for e in det.evidence if e.strong) or 'no evidence'}). "
            f"Run `specfmt migrate --to {det.line}` to write it",
            pointer="",
        )


class VersionDisagreesWithKeys(_VersionRule):
    """The declared `speculators_version` does not match the keys the file has.

    ## What it checks
    The release line named by `speculators_version` is one whose writer produces the keys
    present (and, for files a release wrote, absent) in the config.

    ## Why it matters
    speculators stamps the version once and never updates it: a file loaded and saved again
    by a newer release keeps the old string next to the new release's keys (and a hand edit
    can do the opposite). Tools that trust the string apply the wrong defaults; specfmt uses
    the version the keys allow and reports both.

    ## Example
    ```json
    {"speculators_model_type": "eagle3", "speculators_version": "0.4.0", "fc_norm": false, "norm_output": false}
    ```

    ## Use instead
    ```json
    {"speculators_model_type": "eagle3", "speculators_version": "0.7.0", "fc_norm": false, "norm_output": false}
    ```
    `specfmt migrate --to 0.7` re-stamps the file.
    """

    id = "M003"
    name = "version-disagrees-with-keys"
    since = "0.1.0"
    severity = Severity.WARNING
    legacy_severity = Severity.INFO

    def check(self, ctx: Context) -> Iterator[Hit]:
        det = _detect(ctx)
        if det.declared_line is None or det.agrees:
            return
        against = [e for e in det.evidence if not e.allows(det.declared_line)]
        strong = [e for e in against if e.strong]
        why = "; ".join(e.describe() for e in (strong or against))
        yield Hit(
            f"speculators_version {det.declared!r} names format {det.declared_line}, but the "
            f"keys say {det.inferred_span} ({why}); the file was probably re-saved by another "
            f"release, which never updates the stamp. specfmt uses {det.line}; run "
            f"`specfmt migrate --to {det.line}` to re-stamp it",
            pointer="/speculators_version",
        )


class OlderFormat(_VersionRule):
    """The config is in an older format version than the latest.

    ## What it checks
    The detected format version is the latest one specfmt knows.

    ## Why it matters
    Older formats lack fields current readers use, and some defaults changed meaning
    between releases. `specfmt migrate` converts step by step and lists every change.

    ## Example
    ```json
    {"speculators_model_type": "eagle3", "speculators_version": "0.2.0"}
    ```

    ## Use instead
    Run `specfmt migrate config.json --in-place` (add `--dry-run` to see the diff first).
    """

    id = "M004"
    name = "older-format"
    since = "0.1.0"
    severity = Severity.INFO

    def check(self, ctx: Context) -> Iterator[Hit]:
        latest = versions.latest()
        if ctx.format_version == latest:
            return
        yield Hit(
            f"format {ctx.format_version} is older than {latest}; `specfmt migrate --to "
            f"{latest}` converts it and lists every change",
            pointer="/speculators_version" if "speculators_version" in ctx.config else "",
        )


class DSparkAnchorUnrecorded(_VersionRule):
    """A DSpark config has no `sample_from_anchor`; its writer meant false, readers assume true.

    ## What it checks
    `dspark` configs carry `sample_from_anchor`.

    ## Why it matters
    Builds 0.7.0.dev42-dev81 wrote DSpark drafts before the field existed; those drafts were
    trained with the anchor as bonus token (`speculative_tokens = block_size - 1`). The field
    added in 0.7.0.dev82 defaults to **true** for dspark, so every current reader drafts
    with the wrong block layout.

    ## Example
    ```json
    {"speculators_model_type": "dspark", "speculators_version": "0.7.0.dev60", "block_size": 8}
    ```

    ## Use instead
    ```json
    {"speculators_model_type": "dspark", "speculators_version": "0.7.0.dev60", "block_size": 8, "sample_from_anchor": false}
    ```
    `specfmt fix` and `specfmt migrate` write it.
    """

    id = "M005"
    name = "dspark-anchor-unrecorded"
    since = "0.7.0"
    severity = Severity.WARNING
    applies_to = ("dspark",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        why = eras.dspark_anchor_missing(ctx.config)
        if why is not None:
            yield Hit(
                f'sample_from_anchor is absent: {why}. Write "sample_from_anchor": false '
                "(`specfmt fix` does)",
                pointer="/sample_from_anchor",
            )


class DFlashTokensOffByOne(_VersionRule):
    """A DFlash config from 0.5.0.dev46-dev71 sets `speculative_tokens` to `block_size`.

    ## What it checks
    DFlash files written by the builds with the off-by-one (0.5.0.dev46 ... dev71) have
    `speculative_tokens = block_size - 1`.

    ## Why it matters
    Those builds wrote `block_size`; the anchor is the verifier's bonus token, so only
    `block_size - 1` positions are drafted. Readers that take `speculative_tokens` at its
    word ask the draft for one token it never learned.

    ## Example
    ```json
    {"speculators_model_type": "dflash", "speculators_version": "0.5.0.dev60", "block_size": 16,
     "speculators_config": {"proposal_methods": [{"proposal_type": "greedy", "speculative_tokens": 16}]}}
    ```

    ## Use instead
    `"speculative_tokens": 15`; `specfmt migrate` corrects it.
    """

    id = "M006"
    name = "dflash-tokens-off-by-one"
    since = "0.5.0"
    severity = Severity.WARNING
    applies_to = ("dflash",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        bug = eras.dflash_off_by_one(ctx.config)
        if bug is not None:
            i, written, right = bug
            yield Hit(
                f"speculative_tokens is {written} = block_size, written by "
                f"{ctx.config.get('speculators_version')} (DFlash builds 0.5.0.dev46-dev71 were "
                f"off by one); set it to {right} (`specfmt migrate` does)",
                pointer=f"/speculators_config/proposal_methods/{i}/speculative_tokens",
            )


class ConverterLostDecoderLayer(_VersionRule):
    """An EAGLE-3 conversion from a release whose converter dropped the decoder layer.

    ## What it checks
    EAGLE-3 converter output (`architectures: ["Eagle3Speculator"]`) stamped 0.2.0.dev20 ...
    0.4.0 or 0.5.0.dev1 ... dev13.

    ## Why it matters
    Those converters lost the `midlayer.*` -> `layers.0.*` rename: checkpoints converted from
    SafeAILab/NVIDIA EAGLE-3 weights have a randomly initialised decoder layer and an
    acceptance rate near zero. The config looks fine; only re-converting repairs it.

    ## Example
    ```json
    {"speculators_model_type": "eagle3", "architectures": ["Eagle3Speculator"], "speculators_version": "0.3.0"}
    ```

    ## Use instead
    Re-convert the original checkpoint with speculators >= 0.4.0.1, then check that
    `layers.0.self_attn.*` in model.safetensors are not random (`specfmt validate --deep`).
    """

    id = "M007"
    name = "converter-lost-decoder-layer"
    since = "0.1.0"
    severity = Severity.WARNING
    applies_to = ("eagle3",)
    references = ("vllm-project/speculators#1114", "vllm-project/speculators#358")

    def check(self, ctx: Context) -> Iterator[Hit]:
        yield from _problem_hits(ctx, self.id)


class HiddenStatesOffByOne(_VersionRule):
    """An EAGLE-3 draft trained on hidden states captured one layer late (0.3-0.4 data).

    ## What it checks
    Trained EAGLE-3 drafts (`architectures: ["Eagle3DraftModel"]`) stamped 0.3.0.dev37 ...
    0.5.0.dev16 with no explicit aux layer ids.

    ## Why it matters
    The 0.3-0.4 data generation captured the output of layer L where readers feed the state
    entering layer L, so the draft learned from features one layer later than it is served
    with. Nothing in the config records it; acceptance is lower than it should be.

    ## Example
    ```json
    {"speculators_model_type": "eagle3", "architectures": ["Eagle3DraftModel"], "speculators_version": "0.4.0", "eagle_aux_hidden_state_layer_ids": null}
    ```

    ## Use instead
    Re-train on data generated with speculators >= 0.5, or measure acceptance before serving.
    """

    id = "M008"
    name = "hidden-states-off-by-one"
    since = "0.1.0"
    severity = Severity.WARNING
    legacy_severity = Severity.INFO
    applies_to = ("eagle3",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        yield from _problem_hits(ctx, self.id)
