"""What can be wrong with a safetensors file: one error kind per H rule, and the error that
carries the kind, the tensor it concerns and the message the rule words."""

from __future__ import annotations

import enum

from spec_format.base.errors import InputError
from spec_format.facts import header_messages


class HeaderErrorKind(str, enum.Enum):
    """What went wrong. Each value is the name of the H rule that reports it."""

    HEADER_TOO_SMALL = "header-too-small"
    HEADER_TOO_LARGE = "header-too-large"
    HEADER_LENGTH_OUT_OF_BOUNDS = "header-length-out-of-bounds"
    HEADER_NOT_UTF8 = "header-not-utf8"
    HEADER_NOT_JSON = "header-not-json"
    HEADER_NOT_OBJECT = "header-not-object"
    DUPLICATE_TENSOR_NAME = "duplicate-tensor-name"
    INVALID_METADATA = "invalid-metadata"
    INVALID_TENSOR_ENTRY = "invalid-tensor-entry"
    UNKNOWN_DTYPE = "unknown-dtype"
    INVALID_SHAPE = "invalid-shape"
    INVALID_DATA_OFFSETS = "invalid-data-offsets"
    TENSOR_SIZE_MISMATCH = "tensor-size-mismatch"
    BUFFER_SIZE_MISMATCH = "buffer-size-mismatch"
    FILE_UNREADABLE = "weights-file-unreadable"


#: Kinds after which nothing in the header can be trusted (no tensor list at all).
FATAL_KINDS = frozenset(
    {
        HeaderErrorKind.HEADER_TOO_SMALL,
        HeaderErrorKind.HEADER_TOO_LARGE,
        HeaderErrorKind.HEADER_LENGTH_OUT_OF_BOUNDS,
        HeaderErrorKind.HEADER_NOT_UTF8,
        HeaderErrorKind.HEADER_NOT_JSON,
        HeaderErrorKind.HEADER_NOT_OBJECT,
        HeaderErrorKind.FILE_UNREADABLE,
    }
)


class HeaderError(InputError):
    """A safetensors file that the library would refuse (or that we refuse to read).

    ``kind`` names the H rule; its template (:mod:`spec_format.facts.header_messages`) words the
    message from ``variant`` and ``params``.
    ``tensor`` names the entry when the problem is about one tensor. ``str(error)`` is a
    complete, user-facing sentence.
    """

    def __init__(
        self,
        kind: HeaderErrorKind,
        variant: str | None = None,
        *,
        tensor: str | None = None,
        file: str | None = None,
        **params: object,
    ) -> None:
        message = header_messages.message(kind.value, variant, **params)
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.tensor = tensor
        self.file = file

    @property
    def fatal(self) -> bool:
        return self.kind in FATAL_KINDS

    def __repr__(self) -> str:
        return f"HeaderError({self.kind.value!r}, {self.message!r}, tensor={self.tensor!r})"
