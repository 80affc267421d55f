"""The bounded reader: one read of the size fstat gives, more only for a file that grew."""

from __future__ import annotations

import os

import pytest

from spec_format.base import bounded


def _shrunk_fstat(monkeypatch, size: int) -> None:
    """fstat reports ``size`` bytes: the file grows between fstat and the read."""
    real = os.fstat

    def fstat(fd):
        st = list(real(fd))
        st[6] = size  # st_size
        return os.stat_result(st)

    monkeypatch.setattr(bounded.os, "fstat", fstat)


def test_a_file_is_read_whole(tmp_path):
    path = tmp_path / "c.json"
    path.write_bytes(b"x" * 5000)
    assert bounded.read_file(path, limit=5000, what="a JSON file") == b"x" * 5000
    with pytest.raises(bounded.ReadRefused) as refused:
        bounded.read_file(path, limit=4999, what="a JSON file")
    assert refused.value.kind == "too-large"


@pytest.mark.parametrize("reported", [0, 10, 99])
def test_a_file_that_grew_after_fstat_is_read_on(tmp_path, monkeypatch, reported):
    path = tmp_path / "c.json"
    path.write_bytes(bytes(range(100)))
    _shrunk_fstat(monkeypatch, reported)
    assert bounded.read_file(path, limit=1000, what="a JSON file") == bytes(range(100))


def test_a_file_that_grew_past_the_limit_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "c.json"
    path.write_bytes(b"x" * 100)
    _shrunk_fstat(monkeypatch, 10)
    with pytest.raises(bounded.ReadRefused) as refused:
        bounded.read_file(path, limit=50, what="a JSON file")
    assert refused.value.kind == "too-large" and "grew" in refused.value.message
