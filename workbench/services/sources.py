"""An item's source for the pane beside the form: a scanned PDF or image (a path or URL), or the raw text."""

from __future__ import annotations

import dataclasses
import urllib.parse
from pathlib import Path
from typing import Any

PDF_SUFFIXES = (".pdf",)
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".tif", ".tiff", ".webp")
MAX_BYTES = 64 * 1024 * 1024  # a scan larger than this is not shown (and not read into memory)
URL_TIMEOUT = 15.0


@dataclasses.dataclass(frozen=True)
class Source:
    """What the pane shows: a PDF's or image's bytes, text, nothing, or why it cannot show it."""

    kind: str  # "pdf", "image", "text", "none" or "problem"
    name: str = ""  # the path or URL as the item names it
    data: bytes = b""
    text: str = ""
    problem: str = ""


def base_dir(config_path: str, source_dir: str | None) -> Path:
    """Where relative source paths start: `source_dir` (itself relative to the config file's folder),
    or the config file's folder."""
    folder = Path(config_path).parent
    if source_dir is None:
        return folder
    path = Path(source_dir).expanduser()
    return path if path.is_absolute() else folder / path


def read(value: Any, base: Path, *, timeout: float = URL_TIMEOUT) -> Source:
    """The source an item's column names: a file (relative to `base`), an http(s) URL, or the text itself.

    Blocks on the disk or the network: the window calls it off its GUI thread.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return Source("none")
    if isinstance(value, bytes):
        return _classified(value, "")
    text = str(value).strip()
    scheme = urllib.parse.urlsplit(text).scheme.lower()
    if scheme in ("http", "https"):
        return _fetch(text, timeout)
    if scheme == "file":
        from urllib.request import url2pathname  # here: http.client and email are no part of a claim

        return _file(Path(url2pathname(urllib.parse.urlsplit(text).path)), text)
    if "\n" not in text and Path(text).suffix.lower() in (*PDF_SUFFIXES, *IMAGE_SUFFIXES):
        path = Path(text).expanduser()
        return _file(path if path.is_absolute() else base / path, text)
    return Source("text", text=str(value))


def _file(path: Path, name: str) -> Source:
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            return Source("problem", name, problem=f"{path} is {size // (1024 * 1024)} MB, too large to show here")
        data = path.read_bytes()
    except FileNotFoundError:
        return Source("problem", name, problem=f"{path} does not exist (or is not reachable from this computer)")
    except IsADirectoryError:
        return Source("problem", name, problem=f"{path} is a folder, not a file")
    except OSError as exc:
        return Source("problem", name, problem=f"{path} cannot be read: {exc.strerror or exc}")
    return _classified(data, name)


def _fetch(url: str, timeout: float) -> Source:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            data = response.read(MAX_BYTES + 1)
    except urllib.error.HTTPError as exc:
        return Source("problem", url, problem=f"{url}: the server answered {exc.code} {exc.reason}")
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return Source("problem", url, problem=f"{url} cannot be fetched: {reason}")
    if len(data) > MAX_BYTES:
        return Source(
            "problem", url, problem=f"{url} is larger than {MAX_BYTES // (1024 * 1024)} MB, too large to show here"
        )
    return _classified(data, url)


def _classified(data: bytes, name: str) -> Source:
    """PDF and image by their first bytes (a name's suffix can lie); anything else as text."""
    if data.startswith(b"%PDF"):
        return Source("pdf", name, data=data)
    if any(data.startswith(magic) for magic in _IMAGE_MAGIC):
        return Source("image", name, data=data)
    try:
        return Source("text", name, text=data.decode("utf-8"))
    except UnicodeDecodeError:
        return Source("problem", name, problem=f"{name or 'the source'} is neither a PDF, an image nor text")


_IMAGE_MAGIC = (b"\x89PNG", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"BM", b"II*\x00", b"MM\x00*", b"RIFF")
