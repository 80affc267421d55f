"""The command line only parses: each command hands its flags to one library function,
patched here (as check-jsonschema's tests/unit/cli/test_parse.py patch its checker), so
argument handling is tested without running a check."""

from __future__ import annotations

from pathlib import Path

import pytest

from spec_format.rewrites import rewrite
from spec_format.rules.base import Profile
from spec_format.runner import validation


class _Job:
    calls: list = []

    def __init__(self, paths, options=None, **keywords):
        _Job.calls.append((paths, options, keywords))

    def __iter__(self):
        return iter(())

    def notes(self):
        return []


@pytest.fixture
def job(monkeypatch):
    _Job.calls = []
    monkeypatch.setattr(validation, "Job", _Job)
    return _Job.calls


def test_validate_defaults(cli, job):
    assert cli("validate", "a", "b").exit_code == 0
    ((paths, options, keywords),) = job
    assert paths == ["a", "b"]
    assert options == validation.ValidateOptions(interface="cli")  # messages name flags
    assert keywords == {"settings": True, "config": None, "given": []}


def test_validate_flags_given_are_named(cli, job):
    args = ["validate", "x", "--profile", "strict", "--select", "C", "--ignore", "C009"]
    assert cli(*args, "--engine", "vllm==0.28.0", "--isolated", "-r", "--deep").exit_code == 0
    ((_, options, keywords),) = job
    assert options.profile is Profile.STRICT and options.recursive and options.deep
    assert "C009" not in options.select - options.ignore and "C001" in options.select
    assert options.engines == ("vllm==0.28.0",)
    assert keywords["settings"] is False
    assert sorted(keywords["given"]) == ["engines", "ignore", "profile", "select"]


def test_validate_config_file_is_passed_through(cli, job, tmp_path):
    assert cli("validate", "x", "--config", tmp_path / "c.toml").exit_code == 0
    assert job[0][2]["config"] == tmp_path / "c.toml"


def test_validate_bad_selector_stops_before_the_job(cli, job):
    result = cli("validate", "x", "--select", "Z999")
    assert result.exit_code == 2 and "--select" in result.output and not job


@pytest.fixture
def rewrite_job(monkeypatch):
    calls = []

    def fake(kind, paths, options, write, **keywords):
        calls.append((kind, paths, options, write, keywords))
        return iter(())

    monkeypatch.setattr(rewrite, "rewrite_job", fake)
    return calls


@pytest.mark.parametrize("command", ["fix", "migrate"])
def test_rewrite_commands_hand_their_flags_to_rewrite_job(cli, rewrite_job, command):
    args = [command, "a", "b", "--check", "--engine", "vllm==0.28.0", "--isolated"]
    assert cli(*args).exit_code == 0
    ((kind, paths, options, write, keywords),) = rewrite_job
    assert kind == command and paths == [Path("a"), Path("b")]
    assert options.engines == ("vllm==0.28.0",)
    assert write == rewrite.WriteOptions(check=True)
    assert keywords == {"settings": False, "config": None}


def test_fix_aux_layer_ids_are_parsed(cli, rewrite_job):
    assert cli("fix", "a", "--aux-layer-ids", "2,18,33", "--in-place").exit_code == 0
    options = rewrite_job[0][2]
    assert options.aux_layer_ids == (2, 18, 33)
    assert rewrite_job[0][3] == rewrite.WriteOptions(in_place=True)


def test_migrate_options(cli, rewrite_job):
    assert cli("migrate", "a", "--to", "0.5", "--from", "0.2", "--allow-lossy").exit_code == 0
    options = rewrite_job[0][2]
    assert (options.to, options.source_version, options.allow_lossy) == ("0.5", "0.2", True)


def test_exclusive_write_flags_stop_before_the_job(cli, rewrite_job):
    result = cli("migrate", "a", "--in-place", "-o", "b")
    assert result.exit_code == 2 and "exclude each other" in result.output and not rewrite_job
