"""An uploaded bot's code, read and checked. ``read_upload`` is pure and checks every cap before the
work it limits (an archive's declared sizes are never trusted)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import logging
import posixpath
import tarfile
import threading
import zipfile
import zlib
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import NamedTuple

from bots.languages import LANGUAGES as TABLE
from bots.languages import SUFFIXES

logger = logging.getLogger(__name__)

LANGUAGES = tuple(TABLE)
MAX_ARCHIVE_BYTES = 1 << 20
MAX_UNPACKED_BYTES = 10 << 20
MAX_FILES = 200
MANIFEST = "arena.json"
MAX_PATH_CHARS = 255
CHUNK = 64 * 1024

#: a single source file's suffix -> its language
SOURCE_SUFFIXES = SUFFIXES
#: the languages and their files, as a sentence names them
ACCEPTED = ", ".join(
    f"{language.title} ({' or '.join(language.suffixes)})" for language in TABLE.values()
)
ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz")


class UploadError(ValueError):
    """A clear sentence for a person (shown as-is by the form, the API's 400 and the CLI)."""


@dataclass(frozen=True)
class CodeBundle:
    language: str  # a key of ``bots.languages.LANGUAGES``
    entry: str  # relative path of the entry file inside `files`
    files: Mapping[str, bytes]  # relative POSIX path -> content

    @property
    def size(self) -> int:
        return sum(len(data) for data in self.files.values())


class Upload(NamedTuple):
    """An upload read once: its file name, its bytes as sent, and the bundle they hold."""

    name: str
    data: bytes
    bundle: CodeBundle


#: the unpacked bytes of the bundles ``bundle_of`` keeps (an upload unpacks to 10 MiB at most)
MAX_KEPT_BYTES = 64 << 20
_kept: OrderedDict[str, CodeBundle] = OrderedDict()
_kept_lock = threading.Lock()


def _key(filename: str, data: bytes) -> str:
    return hashlib.sha256(filename.encode("utf-8", "surrogatepass") + b"\0" + data).hexdigest()


def keep(upload: Upload) -> None:
    """Keep ``upload``'s bundle for ``bundle_of`` (the least recently used go past the cap)."""
    _keep(_key(upload.name, bytes(upload.data)), upload.bundle)


def _keep(key: str, bundle: CodeBundle) -> None:
    with _kept_lock:
        _kept[key] = bundle
        _kept.move_to_end(key)
        while len(_kept) > 1 and sum(b.size for b in _kept.values()) > MAX_KEPT_BYTES:
            _kept.popitem(last=False)


def bundle_of(filename: str, data: bytes) -> CodeBundle:
    """The bundle of a stored upload, parsed at most once in this process while it is kept
    (by the upload that stored it, or by the first match that played it here)."""
    data = bytes(data)
    key = _key(filename, data)
    with _kept_lock:
        found = _kept.get(key)
        if found is not None:
            _kept.move_to_end(key)
            return found
    bundle = read_upload(filename, data)
    _keep(key, bundle)
    return bundle


def read_upload(filename: str, data: bytes) -> CodeBundle:
    """One source file (its language by its suffix, ``bots.languages``), or a ``.zip``/``.tar.gz``
    archive with an ``arena.json`` manifest (``{"language": "python", "entry": "bot.py"}``).
    Raises UploadError."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise UploadError("The upload is not a file.")
    if len(data) > MAX_ARCHIVE_BYTES:
        raise UploadError(
            f"The upload is {len(data):,} bytes; the limit is {MAX_ARCHIVE_BYTES:,} bytes (1 MiB)."
        )
    if len(data) == 0:
        raise UploadError("The upload is empty.")
    name = posixpath.basename((filename or "").replace("\\", "/")).strip()
    lowered = name.lower()
    for suffix, language in SOURCE_SUFFIXES.items():
        if lowered.endswith(suffix):
            entry = _clean_path(name)
            return _bundle(language, entry, {entry: bytes(data)})
    if lowered.endswith(".zip"):
        files = _read_zip(bytes(data))
    elif lowered.endswith((".tar.gz", ".tgz")):
        files = _read_tar(bytes(data))
    else:
        raise UploadError(
            f"Upload one source file in {ACCEPTED}, or a .zip or .tar.gz archive with an "
            f"{MANIFEST} manifest; {name or 'this file'!r} is none of these."
        )
    return _from_manifest(files)


# -- paths ------------------------------------------------------------------------------


def _clean_path(raw: str) -> str:
    """The member's path as a relative POSIX path inside the bundle, or UploadError."""
    shown = raw[:80]
    if not raw or len(raw) > MAX_PATH_CHARS:
        raise UploadError(f"A file name in the upload is empty or too long: {shown!r}.")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in raw) or "\\" in raw:
        raise UploadError(
            f"A file name in the upload has a control character or a backslash: {shown!r}."
        )
    if raw.startswith("/") or (len(raw) > 1 and raw[1] == ":"):
        raise UploadError(f"A path in the upload is absolute: {shown!r}.")
    parts = [part for part in raw.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise UploadError(f"A path in the upload leaves its folder ('..'): {shown!r}.")
    if not parts:
        raise UploadError(f"A file name in the upload is empty: {shown!r}.")
    return "/".join(parts)


# -- archives ---------------------------------------------------------------------------


class _Budget:
    """The unpacked bytes left, charged while decompressing."""

    def __init__(self, limit: int = MAX_UNPACKED_BYTES) -> None:
        self.left = limit

    def charge(self, count: int) -> None:
        self.left -= count
        if self.left < 0:
            raise UploadError(
                f"The archive unpacks to more than {MAX_UNPACKED_BYTES:,} bytes (10 MiB): "
                "it is refused (a compression bomb, or simply too big)."
            )


def _read_stream(stream, budget: _Budget) -> bytes:
    out = bytearray()
    while chunk := stream.read(CHUNK):
        budget.charge(len(chunk))
        out += chunk
    return bytes(out)


def _check_count(count: int) -> None:
    if count > MAX_FILES:
        raise UploadError(f"The archive holds {count:,} entries; the limit is {MAX_FILES}.")


def _read_zip(data: bytes) -> dict[str, bytes]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
        raise UploadError("The .zip archive is damaged or not a zip file.") from None
    _check_count(len(infos))
    members = []
    for info in infos:
        path = _clean_path(info.filename)
        kind = (info.external_attr >> 16) & 0o170000
        if info.is_dir():
            continue
        if kind not in (0, 0o100000):  # 0: made on a system without Unix modes
            raise UploadError(
                f"The archive holds {path!r}, which is not a regular file (a link or a device)."
            )
        if info.flag_bits & 0x1:
            raise UploadError(f"The archive holds an encrypted file: {path!r}.")
        members.append((path, info))
    budget = _Budget()
    files: dict[str, bytes] = {}
    for path, info in members:
        _no_duplicate(files, path)
        try:
            with archive.open(info) as stream:
                files[path] = _read_stream(stream, budget)
        except UploadError:
            raise
        except (
            zipfile.BadZipFile,
            NotImplementedError,
            OSError,
            ValueError,
            EOFError,
            zlib.error,
            RuntimeError,
        ):
            raise UploadError(f"The .zip archive is damaged: {path!r} cannot be read.") from None
    return files


#: room for tar's own headers and padding in the decompressed stream (a header block and a
#: padded last block per member, long-name and pax extensions, the end-of-archive record)
TAR_OVERHEAD = MAX_FILES * 4 * 512 + 20 * 512


def _read_tar(data: bytes) -> dict[str, bytes]:
    # The whole stream is decompressed first, under a cap (never trusting a header: a pax
    # header may claim any size), then parsed from memory.
    cap = _Budget(MAX_UNPACKED_BYTES + TAR_OVERHEAD)
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            raw = _read_stream(stream, cap)
    except UploadError:
        raise
    except (OSError, EOFError, zlib.error, ValueError):
        raise UploadError("The .tar.gz archive is damaged or not gzip-compressed.") from None
    budget = _Budget()
    files: dict[str, bytes] = {}
    count = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
            while (member := tar.next()) is not None:
                count += 1
                _check_count(count)
                path = _clean_path(member.name)
                if member.isdir():
                    continue
                if not member.isreg() or member.issparse():
                    raise UploadError(
                        f"The archive holds {path!r}, which is not a regular file "
                        "(a link or a device)."
                    )
                _no_duplicate(files, path)
                stream = tar.extractfile(member)
                files[path] = _read_stream(stream, budget) if stream is not None else b""
    except UploadError:
        raise
    except (tarfile.TarError, OSError, EOFError, ValueError):
        raise UploadError(
            "The .tar.gz archive is damaged: its tar content cannot be read."
        ) from None
    return files


def _no_duplicate(files: dict[str, bytes], path: str) -> None:
    if path in files:
        raise UploadError(f"The archive holds {path!r} twice.")


# -- the manifest -----------------------------------------------------------------------


def _strip_folder(files: dict[str, bytes]) -> dict[str, bytes]:
    """An archive of one folder (``mybot/arena.json``) as its content."""
    tops = {path.split("/", 1)[0] for path in files}
    if MANIFEST in files or len(tops) != 1 or any("/" not in path for path in files):
        return files
    top = tops.pop()
    return {path[len(top) + 1 :]: data for path, data in files.items()}


def _no_file_as_folder(files: dict[str, bytes]) -> None:
    """UploadError when a path is both a file and a folder (``a`` and ``a/b``): such an
    archive cannot be unpacked, so its bot could never start."""
    for path in files:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if folder in files:
                raise UploadError(
                    f"The archive holds {folder!r} both as a file and as the folder of "
                    f"{path!r}; rename one of them."
                )


def _from_manifest(files: dict[str, bytes]) -> CodeBundle:
    _no_file_as_folder(files)
    files = _strip_folder(files)
    raw = files.get(MANIFEST)
    if raw is None:
        raise UploadError(
            f"The archive has no {MANIFEST} at its top level; add one such as "
            '{"language": "python", "entry": "bot.py"}.'
        )
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise UploadError(f"The manifest {MANIFEST} is not valid JSON text.") from None
    if not isinstance(manifest, dict):
        raise UploadError(
            f"The manifest {MANIFEST} must be an object such as "
            '{"language": "python", "entry": "bot.py"}.'
        )
    language, entry = manifest.get("language"), manifest.get("entry")
    if language not in LANGUAGES:
        named = ", ".join(f'"{slug}"' for slug in LANGUAGES)
        raise UploadError(f"The manifest {MANIFEST} must name the language, one of {named}.")
    if not isinstance(entry, str) or not entry:
        raise UploadError(f'The manifest {MANIFEST} must name the entry file ("entry": "bot.py").')
    entry = _clean_path(entry)
    if entry not in files:
        raise UploadError(f"The entry file {entry!r} named in {MANIFEST} is not in the archive.")
    return _bundle(language, entry, files)


def _bundle(language: str, entry: str, files: dict[str, bytes]) -> CodeBundle:
    suffixes = [s for s, lang in SOURCE_SUFFIXES.items() if lang == language]
    if not entry.lower().endswith(tuple(suffixes)):
        raise UploadError(
            f"The entry file {entry!r} does not look like {language} (expected "
            f"{' or '.join(suffixes)})."
        )
    try:
        files[entry].decode("utf-8")
    except UnicodeDecodeError:
        raise UploadError(f"The entry file {entry!r} is not UTF-8 text.") from None
    return CodeBundle(language=language, entry=entry, files=MappingProxyType(dict(files)))
