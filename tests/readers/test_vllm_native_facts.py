"""What each vLLM release makes of an EAGLE-3 draft it reads as it is
(schema/readers/native/vllm.json) against every release's wheel: scripts/vllm-native-facts.py
--check executes fc's width from each wheel's llama_eagle3.py again and compares."""

from __future__ import annotations

import pytest

from tests.common import ROOT, load_script

pytestmark = pytest.mark.readers

script = load_script(ROOT / "scripts" / "vllm-native-facts.py")


def test_table_matches_every_release_wheel():
    assert script.main(["--check"]) == 0
