"""The hand-written rule pages (spec_format/rules/docs/*.md) say what the code and the facts
say: the command a page recommends is the one its finding prints, and a claim about which
releases do something is the reader table's."""

from __future__ import annotations

import json
import re

from spec_format.facts import readers
from spec_format.rules.registry import RULES
from tests.common import EXAMPLES

_VERIFIER_COMMAND = re.compile(r"specfmt (\w+) --verifier")
_BY_ID = {rule.id: rule for rule in RULES}


def test_a_page_names_the_command_its_finding_prints(cli, tmp_path):
    """A finding that tells the user `specfmt X --verifier ...` and a page that says
    `specfmt Y --verifier ...` send the same user two ways (C006 said migrate, the finding fix)."""
    verifier = tmp_path / "verifier"
    verifier.mkdir()
    (verifier / "config.json").write_text(
        json.dumps({"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"]})
    )
    printed: dict[str, set[str]] = {}
    for extra in ((), ("--verifier", str(verifier))):
        result = cli("validate", *map(str, EXAMPLES), "--format", "json", *extra)
        reports = json.loads(result.output)
        for report in reports if isinstance(reports, list) else [reports]:
            for file in report.get("files", [report]):
                for finding in file.get("findings", []):
                    text = json.dumps(finding)
                    for verb in _VERIFIER_COMMAND.findall(text):
                        printed.setdefault(finding["rule"], set()).add(verb)
    assert "C006" in printed  # the examples have one: the test looks at something
    for rule_id, verbs in printed.items():
        on_page = set(_VERIFIER_COMMAND.findall(_BY_ID[rule_id].doc))
        assert on_page <= verbs, f"{rule_id}: the page says {on_page}, the finding {verbs}"


def test_c020_page_says_which_releases_size_fc_for_three():
    """C020's page said "before 0.22"; the reader table says every covered release."""
    sized = {}
    for rid in readers.releases():
        name, version = rid.split("==")
        if name == "vllm":
            weights = readers.release(name, version).data.get("models", {}).get("eagle3", {})
            sized[version] = weights.get("weights", {}).get("fc_aux_layers")
    page = " ".join(_BY_ID["C020"].doc.split())
    if set(sized.values()) == {3}:
        assert "Every covered vLLM release sizes `fc` for three" in page
        # a class of its own that sizes fc otherwise is named with its first release
        by_ids = sorted(
            (tuple(map(int, v.split("."))), v)
            for rid in readers.releases()
            if rid.startswith("vllm==")
            for v in [rid.split("==")[1]]
            if readers.release("vllm", v)
            .data.get("models", {})
            .get("eagle3", {})
            .get("weights", {})
            .get("per_class", {})
            .get("Eagle3Qwen3ForCausalLM")
        )
        if by_ids:
            first = ".".join(by_ids[0][1].split(".")[:2])
            assert f"Qwen3-layer class sizes it from the ids from {first}" in page
        assert not re.search(r"before 0\.\d+ sizes", page)
    else:
        first = min(
            (v for v, n in sized.items() if n != 3), key=lambda v: tuple(map(int, v.split(".")))
        )
        assert f"before {first} sizes" in page
