"""The numpy layers of all-MiniLM-L6-v2, used when onnxruntime is not there
(`encoders.MiniLMEncoder`): the weights as column panels, LayerNorm and BERT's exact GELU."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Layer:
    """One transformer layer's weights, the matrices as panels (see `Panels`)."""

    qkv: Any
    """Fused query (pre-scaled), key and value projection, (3 * heads, hidden, head size)."""
    qkv_bias: Any
    """Its bias, shaped to broadcast over the (panel, token, feature) product."""
    out: Any
    """Attention output projection panels."""
    out_bias: Any
    """Its bias."""
    attn_norm: tuple[Any, Any]
    """LayerNorm after attention: weight and bias."""
    up: Any
    """Feed-forward expansion panels (hidden -> 4 * hidden)."""
    up_bias: Any
    """Its bias."""
    down: Any
    """Feed-forward contraction panels (4 * hidden -> hidden)."""
    down_bias: Any
    """Its bias."""
    out_norm: tuple[Any, Any]
    """LayerNorm after the feed-forward block: weight and bias."""


class Panels:
    """Every weight matrix as contiguous (inputs, width) column panels in one arena; the
    width is the attention head size (32 here), so the QKV product's panels are its heads.

    Why (measured on this 2-core EPYC, OpenBLAS 0.3.31, one thread, a 11-token message): the
    24 matrix products cost 8-10 ms on plain (inputs, outputs) matrices whatever the token
    count (6.2 ms at 3 tokens), i.e. OpenBLAS re-packs all 42 MB of weights per message at
    ~5 GB/s. As 32-column panels, each product reads its panel straight through (a batched
    matmul, one small GEMM per panel) and the 24 products take 3-3.5 ms. One arena of 42 MB
    lets numpy ask for huge pages, sparing the TLB another ~10%.
    """

    def __init__(self, floats: int, width: int) -> None:
        import numpy as np

        self.width = width
        self._arena = np.empty(floats, dtype=np.float32)
        self._used = 0

    def add(self, weight: Any) -> Any:
        """Copy a (inputs, outputs) matrix in as (outputs / width, inputs, width)."""
        import numpy as np

        inputs, outputs = weight.shape
        panels = self._arena[self._used : self._used + weight.size].reshape(
            outputs // self.width, inputs, self.width
        )
        panels[...] = (
            np.asarray(weight, dtype=np.float32).reshape(inputs, -1, self.width).transpose(1, 0, 2)
        )
        self._used += weight.size
        return panels


def panel_bias(bias: Any, width: int) -> Any:
    import numpy as np

    return np.asarray(bias, dtype=np.float32).reshape(-1, 1, width)


def panel_product(x: Any, panels: Any) -> Any:
    """`x @ weight` for a weight held as panels: (tokens, inputs) -> (tokens, outputs)."""
    import numpy as np

    count, _, panel = panels.shape
    result = np.empty((x.shape[0], count * panel), dtype=np.float32)
    # Written straight into the (tokens, outputs) result through a strided view (BLAS takes it).
    np.matmul(x, panels, out=result.reshape(x.shape[0], count, panel).transpose(1, 0, 2))
    return result


def layer_norm(x: Any, norm: tuple[Any, Any], eps: float) -> Any:
    """LayerNorm over the last axis; overwrites `x` (always a fresh temporary here)."""
    import numpy as np

    weight, bias = norm
    inverse = np.float32(1.0 / x.shape[-1])
    x -= np.add.reduce(x, axis=-1, keepdims=True) * inverse
    scale = np.einsum("ij,ij->i", x, x)
    scale *= inverse
    scale += np.float32(eps)
    np.sqrt(scale, out=scale)
    np.divide(np.float32(1.0), scale, out=scale)
    x *= scale[:, None]
    x *= weight
    x += bias
    return x


# Abramowitz & Stegun 7.1.26 for erf(z), z = x / sqrt(2): its polynomial halved (the GELU
# needs erf / 2) and its first factor taken to x.
_ERF_P = 0.3275911 / math.sqrt(2.0)
_ERF_HALF_POLY = tuple(
    0.5 * c for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)
)


def gelu(x: Any) -> Any:
    """BERT's exact GELU, x * Phi(x), overwriting `x`.

    erf comes from Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7), as
    Phi(x) = 1/2 + sign(x) * (1/2 - q) with q = (1 - erf(|z|)) / 2: 22 array passes. The
    exponent is clipped (erf is 1 in float32 well before that), which keeps every
    intermediate a normal float: subnormal products made this function 10x slower on large
    activations.
    """
    import numpy as np

    a = np.abs(x)
    t = a * np.float32(_ERF_P)
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    q = t * np.float32(_ERF_HALF_POLY[0])
    for coefficient in _ERF_HALF_POLY[1:]:
        q += np.float32(coefficient)
        q *= t
    a *= a
    np.minimum(a, np.float32(40.0), out=a)
    a *= np.float32(-0.5)
    np.exp(a, out=a)  # exp(-z^2)
    q *= a  # (1 - erf(|z|)) / 2
    np.subtract(np.float32(0.5), q, out=q)
    np.copysign(q, x, out=q)  # erf(z) / 2
    q += np.float32(0.5)
    x *= q
    return x
