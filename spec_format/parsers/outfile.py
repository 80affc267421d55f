"""The one writer behind every file specfmt writes for the user (``-o``, ``--in-place``,
``--backup``; ``forward --dump`` can use it too): :func:`write_output`.

* A regular file (or a symlink to one) is replaced atomically (a symlink keeps pointing at
  the new file, except a Hugging Face cache snapshot's link into ``blobs/``: the blob is
  named by its hash and shared by other snapshots, so a regular file replaces that link): the bytes go to a temporary
  file in the same directory, are fsynced, get the original's mode, owner and extended
  attributes, and only then are renamed over it. Readers see the old or the new file.
* Anything else that exists at the path (``/dev/null``, ``/dev/stdout``, a FIFO, a
  terminal) is written *through*, as a shell redirect would; it is never replaced.
* Replacing holds an exclusive ``flock`` on the original, so concurrent runs on one file
  never interleave (the later one stops and writes nothing).
* A backup is a new file next to the original (``NAME.bak``, then ``NAME.bak.1``, ...):
  created with ``link``, which never overwrites, holding the bytes the caller read, with
  the original's mode, owner and extended attributes.
* The missing directories above a new file are created (``-o new/dir/config.json``).
* A file of a folder output (``schema export``, ``schema vscode``) goes through
  :func:`write_into`: nothing outside the folder changes. A link inside the folder (a
  subdirectory or the file's own name) is never followed: a linked subdirectory is refused,
  a link at the file's name is replaced by the file; a FIFO, device or directory at the
  file's name is refused (exit 2), never written through.
* Temporary names are short (``.specfmt-<pid>-<random>.tmp``), so a target whose name is
  near ``NAME_MAX`` can be rewritten; the temporary files of a run that was killed are
  removed by the next run that writes into the same directory.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import secrets
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from spec_format.base.errors import InputError, UsageError
from spec_format.base.pathkind import kind_of

TMP_RE = re.compile(r"^\.specfmt-(\d+)-[0-9a-f]{8}\.tmp$")
#: a blob of the Hugging Face cache: a git SHA-1 or a SHA-256 (LFS)
_HASH_NAME = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
#: a temporary file older than this is stale even when its pid is alive (pid reused)
STALE_AFTER_S = 24 * 3600
MAX_BACKUPS = 1000
_OURS: set[str] = set()  # temporary names this process created (a concurrent write may own one)


@dataclass(frozen=True)
class Written:
    path: Path  # where the bytes went (a symlink's target for a link to a regular file)
    replaced: bool  # False: written through a device, FIFO or other non-regular file
    backup: Path | None = None


class OutputError(InputError):
    """The output could not be written (exit 3); the message says whether anything changed."""


def write_output(
    path: str | os.PathLike[str],
    data: bytes | str,
    *,
    backup: bool = False,
    expect: bytes | None = None,
) -> Written:
    """Write ``data`` to ``path`` (see the module docstring for how).

    ``backup``: keep the current content as ``NAME.bak[.N]`` first (regular files only).
    ``expect``: the bytes the caller read from ``path``; if the file no longer holds them
    (another process rewrote it meanwhile) nothing is written and :class:`OutputError`
    says so. Missing parent directories of a new file are created; :class:`UsageError`
    when that is impossible because a file stands where a directory should be.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    target = Path(path)
    try:
        st = os.stat(target)
    except (FileNotFoundError, NotADirectoryError):  # the parents are created below
        st = None
    except OSError as exc:
        raise OutputError(
            f"{target}: cannot write ({exc.strerror or exc}); nothing was written"
        ) from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISDIR(st.st_mode):
            raise UsageError(f"{target} is a directory; name the file to write")
        if backup:
            raise UsageError(f"{target} is not a regular file; --backup needs one")
        return _write_through(target, data)
    # a symlink: replace the file it points to and keep the link; but a Hugging Face cache
    # snapshot's link into blobs/ (a blob is named by its hash and shared by other
    # snapshots) is itself replaced by a regular file
    if os.path.islink(target) and not content_addressed(target):
        target = Path(os.path.realpath(target))
    directory = target.parent
    if not directory.is_dir():
        make_parents(target)
    clean_stale_temps(directory)
    try:
        return _replace(target, data, st, backup=backup, expect=expect)
    except OSError as exc:
        what = "the original is unchanged" if st is not None else "nothing was written"
        raise OutputError(f"{target}: could not write ({exc.strerror or exc}); {what}") from None


def write_into(
    folder: str | os.PathLike[str], relative: str | os.PathLike[str], data: bytes | str
) -> Written:
    """Write ``data`` to ``folder/relative``, one file of a folder output; nothing outside
    ``folder`` changes (see the module docstring). ``folder`` itself may be a link (the
    caller named it); below it the missing directories are created and an existing
    component must be a real directory, not a link. :class:`UsageError` (exit 2) for a
    link, FIFO, device or other non-directory in the way."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    root = Path(folder)
    parts = Path(relative).parts
    if not parts or Path(relative).is_absolute() or ".." in parts:
        raise UsageError(f"{relative}: not a file name inside the output folder {root}")
    if not root.is_dir():
        make_parents(root / "x")
    directory = root
    for name in parts[:-1]:
        directory = directory / name
        try:
            st = os.lstat(directory)
        except FileNotFoundError:
            try:
                os.mkdir(directory)
            except OSError as exc:
                raise OutputError(
                    f"{directory}: cannot create the directory ({exc.strerror or exc}); "
                    "nothing was written"
                ) from None
            continue
        if not stat.S_ISDIR(st.st_mode):
            raise UsageError(
                f"{directory} is {_kind(directory)}, not a directory; specfmt writes inside the output "
                f"folder {root} only: remove it or name another folder (nothing was written)"
            )
    target = directory / parts[-1]
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputError(
            f"{target}: cannot write ({exc.strerror or exc}); nothing was written"
        ) from None
    if st is not None and stat.S_ISLNK(st.st_mode):
        st = None  # the link itself is replaced; where it points is never written
    elif st is not None and not stat.S_ISREG(st.st_mode):
        raise UsageError(
            f"{target} is {_kind(target)}, not a regular file; a folder output writes regular files "
            "only: remove it or name another folder (nothing was written)"
        )
    clean_stale_temps(directory)
    try:
        return _replace(target, data, st, backup=False, expect=None)
    except OSError as exc:
        what = "the original is unchanged" if st is not None else "nothing was written"
        raise OutputError(f"{target}: could not write ({exc.strerror or exc}); {what}") from None


def _kind(path: Path) -> str:
    return "a symbolic link" if os.path.islink(path) else kind_of(path)


def content_addressed(link: Path) -> bool:
    """Whether ``link`` is a file of a Hugging Face cache snapshot
    (``models--ORG--NAME/snapshots/REV/...``) pointing into the repository's ``blobs/``,
    where each file is named by the hash of its content and shared by every snapshot that
    holds it: writing through the link would break the hash and change other snapshots."""
    real = Path(os.path.realpath(link))
    if real.parent.name != "blobs" or not _HASH_NAME.fullmatch(real.name):
        return False
    here = Path(os.path.realpath(link.parent))  # the snapshot directory, links resolved
    try:
        inside = here.relative_to(real.parent.parent)
    except ValueError:
        return False
    return len(inside.parts) >= 2 and inside.parts[0] == "snapshots"


def make_parents(target: Path) -> None:
    """Create the missing directories above a new output file (as ``mkdir -p``, and as
    ruff's ``--output-file`` and pytest's ``--junitxml`` do)."""
    directory = target.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = next((p for p in (directory, *directory.parents) if p.exists()), directory)
        raise UsageError(
            f"{target}: cannot create the directory {directory}: {blocker} is not a directory; "
            "name another output path (nothing was written)"
        ) from None
    except OSError as exc:
        raise OutputError(
            f"{target}: cannot create the directory {directory} ({exc.strerror or exc}); "
            "nothing was written"
        ) from None


def _write_through(target: Path, data: bytes) -> Written:
    try:
        # O_TRUNC is harmless on devices and FIFOs; no O_CREAT: the thing exists
        fd = os.open(target, os.O_WRONLY | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0))
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
    except OSError as exc:
        raise OutputError(f"{target}: could not write ({exc.strerror or exc})") from None
    return Written(path=target, replaced=False)


def _replace(
    target: Path, data: bytes, st: os.stat_result | None, *, backup: bool, expect: bytes | None
) -> Written:
    directory = target.parent
    tmp = _new_temp(directory, data, st, src=target)
    backup_path = None
    try:
        with _locked(target, st) as current:
            if expect is not None and current is not None and current != expect:
                raise OutputError(
                    f"{target}: the file changed while specfmt was working on it (another "
                    "process wrote it); nothing was written, run again"
                )
            if backup and current is not None:
                original = expect if expect is not None else current
                backup_path = _make_backup(target, original, st)
            os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(directory)
    return Written(path=target, replaced=True, backup=backup_path)


@contextlib.contextmanager
def _locked(target: Path, st: os.stat_result | None):
    """Hold an exclusive ``flock`` on the file being replaced and yield its current bytes
    (``None`` for a new file). Two specfmt runs on one file never interleave: the second
    finds the lock taken, or finds that the path now names another file, and stops."""
    if st is None:
        yield None
        return
    fd = os.open(target, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OutputError(
                f"{target}: another process is rewriting this file; nothing was written, "
                "run again when it is done"
            ) from None
        if os.fstat(fd).st_ino != os.stat(target).st_ino:  # replaced while we waited
            raise OutputError(
                f"{target}: the file was replaced while specfmt was working on it; nothing "
                "was written, run again"
            )
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        yield b"".join(chunks)
    finally:
        os.close(fd)


def _new_temp(directory: Path, data: bytes, like: os.stat_result | None, *, src: Path) -> Path:
    """A fsynced temporary file in ``directory`` holding ``data``, with the mode and owner
    of ``like`` and the extended attributes of ``src`` (the file it replaces or backs up)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = directory / f".specfmt-{os.getpid()}-{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(tmp, flags, 0o600)
            _OURS.add(tmp.name)
            break
        except FileExistsError:  # pragma: no cover - 32 random bits collided
            continue
    try:
        _write_all(fd, data)
        if like is not None:
            os.fchmod(fd, stat.S_IMODE(like.st_mode))
            if (like.st_uid, like.st_gid) != (os.geteuid(), os.getegid()):
                with contextlib.suppress(PermissionError):  # only root may give files away
                    os.fchown(fd, like.st_uid, like.st_gid)
                    os.fchmod(fd, stat.S_IMODE(like.st_mode))  # chown clears setuid bits
            _copy_xattrs(src, fd)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(fd, 0o666 & ~umask)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    return tmp


def _copy_xattrs(src: Path, fd: int) -> None:
    if not hasattr(os, "listxattr"):
        return
    try:
        names = os.listxattr(src)
    except OSError:
        return
    for name in names:
        with contextlib.suppress(OSError):  # e.g. security.* without privileges
            os.setxattr(fd, name, os.getxattr(src, name))


def _make_backup(target: Path, original: bytes, st: os.stat_result) -> Path:
    """``NAME.bak``, or the first free ``NAME.bak.N``; never overwrites an existing file."""
    tmp = _new_temp(target.parent, original, st, src=target)
    try:
        for n in range(MAX_BACKUPS):
            candidate = target.with_name(target.name + (".bak" if n == 0 else f".bak.{n}"))
            try:
                os.link(tmp, candidate)  # fails with EEXIST instead of replacing
                return candidate
            except FileExistsError:
                continue
        raise OutputError(
            f"{target}: {MAX_BACKUPS} backups ({target.name}.bak ...) exist already; remove "
            "old ones (nothing was written)"
        )
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def clean_stale_temps(directory: Path) -> list[Path]:
    """Remove the temporary files killed runs left in ``directory``; returns them."""
    removed = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        m = TMP_RE.match(entry.name)
        if not m or not entry.is_file(follow_symlinks=False):
            continue
        pid = int(m.group(1))
        with contextlib.suppress(OSError):
            if entry.name in _OURS or in_use(pid, entry.stat().st_mtime, now):
                continue
            os.unlink(entry.path)
            removed.append(Path(entry.path))
    return removed


def in_use(pid: int, mtime: float, now: float) -> bool:
    """A temporary named with ``pid`` and last changed at ``mtime`` may belong to a run that is
    still writing it (another live process, younger than :data:`STALE_AFTER_S`): keep it."""
    return pid != os.getpid() and now - mtime < STALE_AFTER_S and _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError as exc:
        return exc.errno == errno.EPERM  # exists, owned by someone else
    return True


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def fsync_dir(directory: Path) -> None:
    """Flush a directory's entries (a rename or a new file in it) to disk, where the
    platform allows."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    with contextlib.suppress(OSError):
        os.fsync(fd)
    os.close(fd)


# -- directory outputs (convert -o DEST) ---------------------------------------------------------
# A directory is published the way a file is replaced: written in full into a temporary
# directory next to DEST (``.DEST.specfmt-<pid>-<random>.tmp``, created with mkdir, which
# never follows a link), then renamed to DEST, which must be absent or an empty directory;
# on any failure the temporary directory is removed and nothing partial remains.


@contextlib.contextmanager
def directory_output(dest: Path):
    """Yield an empty temporary directory for DEST's files; when the block ends normally
    it becomes DEST (keeping the mode and group of an empty DEST), otherwise it is removed.
    ``dest``: as :func:`resolve_destination` gives it, checked by :func:`check_destination`."""
    tmp = temp_dir_for(dest)
    try:
        like = adopt_destination(tmp, dest)
        yield tmp
        publish(tmp, dest, like)
    except BaseException:
        remove_tree(tmp)
        raise


def temp_dir_for(dest: Path) -> Path:
    """A new, empty temporary directory next to ``dest`` (same filesystem: rename works);
    those a killed conversion to the same DEST left behind are removed first."""
    parent = dest.parent
    if not parent.is_dir():  # create the missing parents, as -o of migrate and fix does
        make_parents(dest)
    _remove_stale(parent, dest.name)
    while True:
        tmp = parent / f".{dest.name}.specfmt-{os.getpid()}-{secrets.token_hex(4)}.tmp"
        try:
            tmp.mkdir()
            return tmp
        except FileExistsError:  # pragma: no cover - 32 random bits collided
            continue
        except OSError as exc:
            raise OutputError(
                f"-o {dest}: cannot create a directory in {parent} ({exc.strerror})"
            ) from None


def _remove_stale(parent: Path, name: str) -> None:
    pattern = re.compile(rf"\.{re.escape(name)}\.specfmt-(\d+)-[0-9a-f]{{8}}\.tmp")
    with contextlib.suppress(OSError), os.scandir(parent) as entries:
        for entry in entries:
            m = pattern.fullmatch(entry.name)
            if not m or not entry.is_dir(follow_symlinks=False):
                continue
            mtime = entry.stat(follow_symlinks=False).st_mtime
            if in_use(int(m.group(1)), mtime, time.time()):
                continue  # another conversion to the same DEST is running
            remove_tree(Path(entry.path))


def adopt_destination(tmp: Path, dest: Path) -> os.stat_result | None:
    """Give the temporary directory the mode and group of an existing empty DEST (a private
    0700 or a group-shared 2770 directory stays one after the rename); returns DEST's
    status for :func:`publish`, None when DEST does not exist. The setgid bit makes the
    files written into it inherit the group, as they would inside DEST."""
    try:
        st = os.lstat(dest)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode):
        return None
    with contextlib.suppress(OSError):  # only a member of the group may give it away
        os.chown(tmp, -1, st.st_gid)
    os.chmod(tmp, stat.S_IMODE(st.st_mode) | stat.S_IRWXU)  # we must write into it meanwhile
    return st


def resolve_destination(dest: Path) -> Path:
    """DEST as written, or the directory a symbolic link named as DEST points to (the link
    stays; the checkpoint goes where it points)."""
    if os.path.islink(dest) and dest.is_dir():
        return Path(os.path.realpath(dest))
    return dest


def check_destination(dest: Path) -> None:
    """DEST must not exist, or be an empty directory (it is never merged into or replaced)."""
    dest = resolve_destination(dest)
    if not os.path.lexists(dest):
        return
    if dest.is_dir() and not dest.is_symlink():
        with os.scandir(dest) as entries:
            if next(entries, None) is None:
                return
        raise UsageError(
            f"-o {dest}: the directory exists and is not empty; choose a new directory or "
            "remove it (specfmt never writes into or over an existing checkpoint)"
        )
    raise UsageError(f"-o {dest}: exists and is not a directory; choose a new directory")


def publish(tmp: Path, dest: Path, like: os.stat_result | None = None) -> None:
    """Rename the finished temporary directory to ``dest`` (absent or an empty directory;
    ``like``: that directory's status, whose exact mode the result gets)."""
    try:
        if like is not None:
            os.chmod(tmp, stat.S_IMODE(like.st_mode))
        os.rename(tmp, dest)
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
            raise UsageError(
                f"-o {dest}: something was created there while converting; nothing was "
                "written, remove it or choose another directory"
            ) from None
        raise OutputError(
            f"-o {dest}: could not rename the converted checkpoint into place "
            f"({exc.strerror}); nothing was written"
        ) from None
    fsync_dir(dest.parent)


def remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
