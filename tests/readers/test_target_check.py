"""V019's facts against the release's own code: SpeculativeConfig's EAGLE-3 target check.

From 0.10.1 to 0.16 ``SpeculativeConfig`` refuses an EAGLE-3 target whose text config's
``model_type`` contains none of a list of strings. Importing the config module needs most of
vLLM's dependency tree, so the ``if`` statement itself is taken from the release's source
(tests/readers/aux_archs.py finds it) together with the list, and executed on a stand-in
``self`` for each verifier model_type below; what it does (raise or pass) must be what the
recorded list (``schema/readers/reads/``, read by V019) says.
"""

from __future__ import annotations

import ast
from types import SimpleNamespace

import pytest

from spec_format.facts import readers, reads
from tests.readers import aux_archs, oracle

pytestmark = pytest.mark.readers

GROUPS = [v for v in reads.groups()]
#: the verifiers' text model_types of tests/data/verifiers and of the corpus, and edges of
#: the substring test
MODEL_TYPES = [
    "llama",
    "llama4_text",
    "qwen2",
    "qwen3",
    "qwen3_moe",
    "qwen3_vl_moe_text",
    "gpt_oss",
    "minicpm",
    "deepseek_v3",
    "kimi_k2",
    "glm4_moe",
    "mistral",
    "gemma3_text",
    "hunyuan_v1_dense",
    "afmoe",
]


def _executes(check: ast.If, allowed: list[str], model_type: str) -> bool:
    """Whether the release's own ``if`` lets the target through (it raises when not)."""
    body = ast.fix_missing_locations(ast.Module(body=[check], type_ignores=[]))
    target = SimpleNamespace(hf_text_config=SimpleNamespace(model_type=model_type))
    stand_in = SimpleNamespace(method="eagle3", target_model_config=target)
    scope = {"self": stand_in, aux_archs.TARGET_LIST: allowed}
    try:
        exec(compile(body, "<release>", "exec"), scope)  # noqa: S102
    except ValueError as exc:
        assert "Eagle3 is only supported" in str(exc)
        return False
    return True


@pytest.mark.parametrize("version", GROUPS)
def test_the_recorded_target_list_is_what_the_release_executes(version):
    src = oracle.env_path(readers.release("vllm", version)) / "src"
    if not src.is_dir():
        pytest.skip(f"no reader environment for vllm {version} (scripts/reader-envs.sh)")
    check = aux_archs.eagle3_target_check(src)
    recorded = reads.eagle3_target_types(version)
    assert (check is None) == (recorded is None), version
    if check is None:
        return
    assert list(recorded) == aux_archs.eagle3_target_types(src)
    for model_type in MODEL_TYPES:
        accepted = any(item in model_type for item in recorded)  # what V019 assumes
        assert _executes(check, list(recorded), model_type) is accepted, (version, model_type)
