"""The recorded MTP layer-count reads (``mtp_n_predict`` in schema/readers/reads/, used by
S006) against each release's own ``hf_config_override``, executed again here from its
source (tests/readers/mtp_reads.py), and the stand-in run against a hand-checked case."""

from __future__ import annotations

import pytest

from spec_format.facts import readers, reads
from tests.readers import mtp_reads, oracle

pytestmark = pytest.mark.readers


@pytest.mark.parametrize("version", list(reads.groups()))
def test_the_recorded_reads_are_what_the_release_executes(version):
    src = oracle.env_path(readers.release("vllm", version)) / "src"
    if not src.is_dir():
        pytest.skip(f"no reader environment for vllm {version} (scripts/reader-envs.sh)")
    assert reads.groups()[version]["mtp_n_predict"] == mtp_reads.n_predict_reads(src)


def test_qwen35_text_config_fallback_arrives_in_0_30():
    """vllm#55322/#55369: the count under text_config is read from 0.30.0 on."""
    assert reads.mtp_count_read("0.29.0", "qwen3_5", "text_config") == (True, None)
    assert reads.mtp_count_read("0.30.0", "qwen3_5", "text_config") == (
        True,
        "text_config.mtp_num_hidden_layers",
    )
    assert reads.mtp_count_read("0.29.0", "qwen3_5", "top") == (True, "mtp_num_hidden_layers")
