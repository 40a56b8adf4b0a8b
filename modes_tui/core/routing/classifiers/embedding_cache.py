"""Example vectors on disk (`EmbeddingCache`), one file per encoder, keyed by each text; the
vectors of recent messages and of the draft being typed in memory (`RecentVectors`)."""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from modes_tui.core.files import atomic_file, open_bounded, private_folder

if TYPE_CHECKING:
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]

WAIT_FOR_DRAFT = 1.0
"""Seconds a route waits for a running draft encode of its text before encoding it itself."""


class EmbeddingCache:
    """Example vectors on disk, one file per encoder, keyed by a hash of each text.

    A restart reads the vectors back instead of encoding the pack again. Files are
    replaced atomically; a damaged file is ignored and rewritten. Reading a file touches
    it, so the state-dir sweep of stale files spares caches in use.
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self._lock = threading.Lock()

    def path_for(self, encoder: str) -> Path:
        """The cache file of one encoder."""
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", encoder)[:60]
        digest = hashlib.sha256(encoder.encode("utf-8")).hexdigest()[:12]
        return self.folder / f"{slug}-{digest}.npz"

    @staticmethod
    def key(text: str) -> str:
        """The cache key of a text."""
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]

    def _read(self, path: Path) -> dict[str, Vector]:
        try:
            # a link or a special file in its place is a damaged cache: rebuilt, never read
            with open_bounded(path, "cache") as handle, np.load(handle, allow_pickle=False) as data:
                keys = data["keys"]
                vectors = data["vectors"].astype(np.float32, copy=False)
            os.utime(path, follow_symlinks=False)
        except (OSError, ValueError, KeyError):
            return {}
        return {str(k): vectors[i] for i, k in enumerate(keys)}

    def load(self, encoder: str, texts: Sequence[str]) -> dict[str, Vector]:
        """The cached vectors of `texts` (those present), by text."""
        stored = self._read(self.path_for(encoder))
        found: dict[str, Vector] = {}
        for text in texts:
            vector = stored.get(self.key(text))
            if vector is not None:
                found[text] = vector
        return found

    def store(self, encoder: str, vectors: Mapping[str, Vector]) -> None:
        """Add `vectors` (by text) to the encoder's file."""
        if not vectors:
            return
        path = self.path_for(encoder)
        with self._lock:
            merged = self._read(path)
            merged.update(
                {self.key(text): np.asarray(v, np.float32) for text, v in vectors.items()}
            )
            keys = np.array(sorted(merged), dtype="U32")
            matrix = np.stack([merged[k] for k in keys])
            try:
                private_folder(path.parent)
                with atomic_file(path, fsync=False) as handle:
                    np.savez(handle, keys=keys, vectors=matrix)
            except OSError:
                # A cache that cannot be written costs a re-encode next start, nothing more.
                return


class RecentVectors:
    """Vectors of the messages the router read lately, and of the draft being typed.

    A route encodes each message once; the conversation step and the next routes find it here
    (the newest `size`). A draft's vectors, encoded while the user types (`put_draft`), sit
    apart, the newest `drafts` of them (more than one prepare encodes: the message, its
    request and the quoted step's texts), so typing a long message never pushes a turn's
    vector out; the draft that is sent moves among the routed messages when a route reads it.
    A draft being encoded is `claim`ed: a route that needs the same text meanwhile waits for
    that encode (`settled`) instead of running a second one beside it (a paste prepared at once
    and sent at once: two encodes on two cores took 118-164 ms where one takes 15-50).
    Not locked: its owner (`EmbeddingClassifier`) holds its own lock around every call but
    `settled`, which takes that lock itself so as to wait outside it.
    """

    def __init__(self, size: int = 64, drafts: int = 8) -> None:
        self.size = size
        self.drafts = drafts
        self._routed: OrderedDict[str, Vector] = OrderedDict()
        self._drafts: OrderedDict[str, Vector] = OrderedDict()
        self._encoding: dict[str, threading.Event] = {}

    def __contains__(self, text: object) -> bool:
        return text in self._routed or text in self._drafts

    def get(self, text: str) -> Vector | None:
        """The vector of `text`, or None; a draft's is moved among the routed messages."""
        vector = self._routed.get(text)
        if vector is None and (vector := self._drafts.pop(text, None)) is not None:
            self.put(text, vector)
        return vector

    def put(self, text: str, vector: Vector) -> None:
        """Keep the vector of a message a route read (the oldest goes past `size`)."""
        self._drafts.pop(text, None)
        self._routed[text] = vector
        while len(self._routed) > self.size:
            self._routed.popitem(last=False)

    def refresh(self, text: str) -> bool:
        """Whether `text` is kept; a draft's is made the newest draft again."""
        if text in self._drafts:
            self._drafts.move_to_end(text)
            return True
        return text in self._routed

    def encode_drafts(self, texts: Sequence[str], encoder: Any, lock: Any) -> None:
        """Encode each of `texts` that is neither kept nor being encoded, one at a time as a
        route encodes (a batch may differ a bit), holding `lock` around every change."""
        with lock:
            claimed = [text for text in dict.fromkeys(texts) if self.claim(text)]
        try:
            while claimed:
                vector = np.asarray(encoder.encode([claimed[0]]), dtype=np.float32)[0]
                with lock:
                    self.put_draft(claimed.pop(0), vector)  # wakes a route waiting for it
        finally:
            with lock:  # a failed encode: the routes waiting for these encode them themselves
                for text in claimed:
                    self.release(text)

    def claim(self, text: str) -> bool:
        """Whether the caller should encode draft `text`: it is neither kept (`refresh`) nor
        being encoded; if so it counts as being encoded until `put_draft` or `release`."""
        if self.refresh(text) or text in self._encoding:
            return False
        self._encoding[text] = threading.Event()
        return True

    def release(self, text: str) -> None:
        """The encode of a claimed draft ended (with a vector or without): wake its waiters."""
        done = self._encoding.pop(text, None)
        if done is not None:
            done.set()

    def settled(self, text: str, lock: Any, seconds: float = WAIT_FOR_DRAFT) -> Vector | None:
        """The vector of `text` (`get`), after waiting up to `seconds` outside `lock` for a
        draft encode of it that is running; None when there is none to wait for."""
        with lock:
            vector = self.get(text)
            running = self._encoding.get(text) if vector is None else None
        if running is None or not running.wait(seconds):
            return vector
        with lock:
            return self.get(text)

    def put_draft(self, text: str, vector: Vector) -> None:
        """Keep the vector of a draft (the oldest draft goes past `drafts`), unless a route
        read the text meanwhile."""
        self.release(text)
        if text in self._routed:
            return
        self._drafts[text] = vector
        self._drafts.move_to_end(text)
        while len(self._drafts) > self.drafts:
            self._drafts.popitem(last=False)
