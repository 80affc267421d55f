"""The Python API: the checks of the command line as functions that return objects.

Everything here is re-exported from the package, so user code reads::

    import spec_format

    report = spec_format.validate(["path/to/checkpoint"])
    config = spec_format.load_config("path/to/checkpoint")
    results = spec_format.migrate_files(["a/", "b/config.json"], in_place=True, backup=True)

The guide (``docs/guide/python-api.md``) walks through it with examples that run as tests
(``tests/test_api.py``), as do the examples of the functions here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from spec_format.base.errors import ExitCode, InputError, InternalError, SpecfmtError
from spec_format.base.report import FileReport, Finding, Report, Severity
from spec_format.facts import schemas
from spec_format.facts.export import ExportedFile
from spec_format.parsers import documents
from spec_format.rewrites import rewrite
from spec_format.rewrites.fixing import FixOptions
from spec_format.rewrites.migration.runner import MigrateOptions
from spec_format.rules.base import Layer, Profile
from spec_format.rules.registry import RULES
from spec_format.runner import source_readers
from spec_format.runner.validation import (
    ValidateOptions,
    check_config_file,
    validate,
    validate_config,
)

__all__ = [
    "ConfigInvalid",
    "FileReport",
    "FileResult",
    "Finding",
    "Profile",
    "Report",
    "Severity",
    "ValidateOptions",
    "fix_files",
    "load_config",
    "migrate_files",
    "model_class",
    "validate",
    "validate_config",
]

FileResult = rewrite.FileResult


def _convert_readers() -> None:
    from spec_format.convert import see_through  # noqa: F401  (registers its reader)


# validate sees third-party drafts through convert (spec_format/runner/source_readers.py)
source_readers.provide(_convert_readers)

#: the layers ``load_config`` enforces: the file can be read, and it matches its schema
_LOAD_LAYERS = (Layer.INPUT, Layer.SCHEMA)


class ConfigInvalid(SpecfmtError):
    """The config was read but does not match the schema of its type and format version.

    ``report`` holds the findings, exactly as ``specfmt validate --select`` with the input and
    schema rules would print them.
    """

    exit_code = int(ExitCode.FINDINGS)

    def __init__(self, report: FileReport) -> None:
        self.report = report
        errors = [f for f in report.sorted_findings() if f.severity is Severity.ERROR]
        shown = "; ".join(f"{f.rule} {f.message}" for f in errors[:3])
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        super().__init__(f"{report.path}: {shown}{more}")


def model_class(format_version: str, model_type: str) -> type[BaseModel]:
    """The generated pydantic model of one type of one format version.

    >>> found = validate(["examples/qwen3-8b-dflash"]).files[0]
    >>> model_class(found.format_version, found.model_type).__name__
    'DFlashConfig'
    """
    from importlib import import_module

    from spec_format.models import VERSIONS

    schema = schemas.type_schema(format_version, model_type)  # UsageError when unknown
    module = import_module(VERSIONS[format_version])
    cls = getattr(module, schema["title"], None)
    if not (isinstance(cls, type) and issubclass(cls, BaseModel)):  # pragma: no cover - codegen bug
        raise InternalError(
            f"spec_format.models has no class {schema['title']} for {model_type} {format_version}; "
            "run `python scripts/generate.py`"
        )
    return cls


def load_config(
    source: str | os.PathLike | dict[str, Any],
    *,
    format_version: str | None = None,
    profile: Profile = Profile.CURRENT,
) -> BaseModel:
    """Read a draft config and return it as the typed model of its type and format version.

    ``source`` is a ``config.json`` path, a checkpoint directory, or an already-parsed dict.
    The file is read strictly (duplicate keys, ``NaN``, a byte-order mark are findings) and
    checked against its JSON Schema; cross-field, consumer and weight rules are not run
    (that is :func:`validate`'s job). Unknown keys are kept, as speculators keeps them.

    Raises :class:`~spec_format.base.errors.InputError` when the file cannot be read or parsed, and
    :class:`ConfigInvalid` (with the findings) when it does not match the schema.

    >>> config = load_config("examples/qwen3-8b-eagle3")
    >>> type(config).__name__
    'Eagle3Config'
    >>> config.norm_before_residual, config.transformer_layer_config.hidden_size
    (True, 4096)
    >>> config.speculators_config.proposal_methods[0].speculative_tokens
    3
    >>> import json, pathlib
    >>> config = json.loads(pathlib.Path("examples/qwen3-8b-dflash/config.json").read_text())
    >>> load_config({**config, "block_size": "8"})
    Traceback (most recent call last):
    ...
    spec_format.api.ConfigInvalid: config.json: S102 /block_size: '8' is not of type integer...
    """
    select = frozenset(r.id for r in RULES if r.layer in _LOAD_LAYERS)
    options = ValidateOptions(profile=profile, format_version=format_version, select=select)
    if isinstance(source, dict):
        report = validate_config(source, options)
        data = source
    else:
        # read once, as validate reads a config (its findings), from the file or the
        # directory holding it, as migrate and fix find it
        report, context = check_config_file(documents.config_path(source), options)
        if report.unreadable:
            first = report.findings[0].message if report.findings else "cannot be read"
            raise InputError(first)
        data = context.config if context is not None else None
    if report.status.value != "ok" or data is None:
        raise ConfigInvalid(report)
    cls = model_class(report.format_version, report.model_type)
    try:
        return cls.model_validate(data)
    except ValidationError as exc:  # pragma: no cover - the models are generated from the schema
        raise InternalError(
            f"{report.path} passed the JSON Schema but not the generated model {cls.__name__}: "
            f"{exc}"
        ) from None


Paths = str | os.PathLike | Iterable[str | os.PathLike]


def migrate_files(
    paths: Paths,
    options: MigrateOptions | None = None,
    *,
    settings: bool = True,
    config: str | os.PathLike | None = None,
    **write: Any,
) -> list[FileResult]:
    """Migrate config files (``config.json`` paths or their directories) and write each where
    the keywords of :class:`~spec_format.rewrites.rewrite.WriteOptions` say: ``in_place=True``
    (atomically; ``backup=True`` keeps ``NAME.bak``), ``output=PATH`` (one input), or nowhere
    (``check=True``, ``dry_run=True``, or no keyword: ``result.outcome.after`` holds the
    text). This is ``specfmt migrate``'s pipeline: the same writer, which never replaces a
    non-regular file and leaves no partial file, and one
    :class:`~spec_format.rewrites.rewrite.FileResult` per input, in order. An input that cannot be
    read or migrated does not stop the others: its result holds the error and exit code.
    Raises :class:`~spec_format.base.errors.UsageError` for keywords that exclude each other,
    before anything is read. Like the command, each input is served with the engines of
    ``options``, else those of its project configuration (``settings=False``: read none;
    ``config``: this file for every input): both run
    :func:`spec_format.rewrites.rewrite.rewrite_job`.

    >>> results = migrate_files("examples/qwen3-8b-eagle3", check=True)
    >>> [(r.ok, r.changed, r.exit_code) for r in results]
    [(True, True, 1)]
    >>> migrate_files("no/such/dir", check=True)[0].error
    'no/such/dir: no such file or directory'
    """
    return _rewrite_files("migrate", paths, options, write, settings, config)


def fix_files(
    paths: Paths,
    options: FixOptions | None = None,
    *,
    settings: bool = True,
    config: str | os.PathLike | None = None,
    **write: Any,
) -> list[FileResult]:
    """Fix what is fixable in place in config files, as ``specfmt fix`` does (the disputed
    defaults, serialization noise, the version stamp, known writer values); the keywords
    and results are those of :func:`migrate_files`.

    >>> [r.changed for r in fix_files(["examples/llama-3.1-8b-eagle3-0.9"], check=True)]
    [False]
    """
    return _rewrite_files("fix", paths, options, write, settings, config)


def write_schemas(files: Iterable[ExportedFile], folder: str | os.PathLike) -> list[Path]:
    """Write exported schema files under ``folder`` (``specfmt schema export`` and ``schema
    vscode``), each through the one writer
    (:func:`spec_format.parsers.outfile.write_into`): atomic per file, and nothing outside
    ``folder`` changes (a link inside it is never followed; a FIFO there is refused).
    Returns the paths written."""
    from spec_format.parsers.outfile import write_into

    root = Path(folder)
    for f in files:
        write_into(root, f.path, f.text)
    return [root / f.path for f in files]


def vscode_workspace(
    version: str,
    schema_dir: str | os.PathLike = ".vscode/specfmt",
    *,
    url: str | None = None,
    match: Iterable[str] = (),
    strict: bool = False,
) -> tuple[Path | None, dict[str, Any]]:
    """``specfmt schema vscode``: the draft-07 root schema of ``version`` written under
    ``schema_dir`` (none when ``url`` names where it is published) and the VS Code settings
    that map ``match`` (default: :func:`~spec_format.facts.export.default_globs`) to it.
    Returns (the file written or None, the settings)."""
    from spec_format.facts import export
    from spec_format.facts.export_strict import strict_file

    written = None
    if url is None:  # the draft-07 root, or the editor variant that flags unknown keys
        if strict:
            chosen = strict_file(version)
        else:
            name, d07 = export.root_name(version), export.Draft.D07
            path = export.export_path(version, name, d07)
            chosen = export.ExportedFile(path, version, name, d07, export.bundle_root(version, d07))
        (written,) = write_schemas([chosen], schema_dir)
        local = Path(schema_dir).is_absolute()
        url = written.resolve().as_uri() if local else "./" + written.as_posix()
    globs = list(match) or export.default_globs(version)
    return written, export.vscode_settings(url, globs)


def _rewrite_files(kind: str, paths: Paths, options, write: dict[str, Any], settings, config):
    if write.get("output") is not None:
        write["output"] = Path(write["output"])
    opts = rewrite.WriteOptions(**write)  # an unknown keyword is a TypeError that names it
    return list(rewrite.rewrite_job(kind, paths, options, opts, settings=settings, config=config))
