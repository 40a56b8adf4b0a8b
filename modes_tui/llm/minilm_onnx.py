"""all-MiniLM-L6-v2's transformer layers as an ONNX graph, run by onnxruntime.

Why: the numpy forward pass spends 85% of a routed message in its 24 matrix products, and
OpenBLAS re-packs each weight matrix on every call (a dozen tokens use each weight a dozen
times, so packing costs as much as the product). onnxruntime packs the constant weights once,
when the session is made, and dispatches its kernels by the CPU it finds at run time (no
build tuned to one machine). Measured on a 2-core EPYC, one thread: 0.06 ms against 0.24 ms
for one (11 x 384) @ (384 x 1536) product.

The model is written here, from the same `model.safetensors` the numpy path reads, as ONNX
protobuf bytes (the few message types a graph needs, `_Proto` below), so nothing but
onnxruntime is needed at run time. `tests/llm/test_minilm_onnx.py` parses the bytes with the
`onnx` package (a dev dependency) and checks the vectors against the numpy path.

The graph takes the summed embeddings (word + position + token type, gathered in numpy)
and an additive attention bias, and returns the last hidden states; pooling stays in numpy.
"""

from __future__ import annotations

import math
import os
import struct
from collections.abc import Callable, Sequence
from typing import Any

FLOAT, INT64 = 1, 7
"""ONNX TensorProto data types."""
OPSET = 17
"""LayerNormalization is an ONNX operator from opset 17."""
IR_VERSION = 8


class _Proto:
    """Protobuf wire format, the subset ONNX needs: varints, length-delimited fields and
    32-bit floats."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    @staticmethod
    def varint(value: int) -> bytes:
        value &= (1 << 64) - 1  # negative int64 as two's complement
        out = bytearray()
        while True:
            byte = value & 0x7F
            value >>= 7
            if value:
                out.append(byte | 0x80)
            else:
                out.append(byte)
                return bytes(out)

    def put_int(self, field: int, value: int) -> _Proto:
        self.parts.append(self.varint(field << 3) + self.varint(value))
        return self

    def put_float(self, field: int, value: float) -> _Proto:
        self.parts.append(self.varint(field << 3 | 5) + struct.pack("<f", value))
        return self

    def put_bytes(self, field: int, value: bytes) -> _Proto:
        self.parts.append(self.varint(field << 3 | 2) + self.varint(len(value)))
        self.parts.append(value)
        return self

    def put_text(self, field: int, value: str) -> _Proto:
        return self.put_bytes(field, value.encode("utf-8"))

    def put_message(self, field: int, value: _Proto) -> _Proto:
        return self.put_bytes(field, value.build())

    def build(self) -> bytes:
        return b"".join(self.parts)


def _tensor(name: str, array: Any) -> _Proto:
    import numpy as np

    data = np.asarray(array)  # not ascontiguousarray: it makes a scalar 1-d
    kind = INT64 if data.dtype == np.int64 else FLOAT
    proto = _Proto()
    for size in data.shape:
        proto.put_int(1, int(size))
    proto.put_int(2, kind).put_text(8, name)
    return proto.put_bytes(9, data.astype("<i8" if kind == INT64 else "<f4", copy=False).tobytes())


def _value_info(name: str, dims: Sequence[int | str]) -> _Proto:
    shape = _Proto()
    for dim in dims:
        one = _Proto()
        if isinstance(dim, str):
            one.put_text(2, dim)
        else:
            one.put_int(1, dim)
        shape.put_message(1, one)
    tensor = _Proto().put_int(1, FLOAT).put_message(2, shape)
    return _Proto().put_text(1, name).put_message(2, _Proto().put_message(1, tensor))


class _Graph:
    """Nodes and initializers, named in order."""

    def __init__(self) -> None:
        self.nodes: list[_Proto] = []
        self.weights: list[_Proto] = []
        self._count = 0

    def constant(self, name: str, array: Any) -> str:
        self.weights.append(_tensor(name, array))
        return name

    def node(self, op: str, inputs: Sequence[str], **attributes: Any) -> str:
        self._count += 1
        output = f"t{self._count}"
        proto = _Proto()
        for name in inputs:
            proto.put_text(1, name)
        proto.put_text(2, output).put_text(3, f"n{self._count}").put_text(4, op)
        for key, value in attributes.items():
            attribute = _Proto().put_text(1, key)
            if isinstance(value, float):
                attribute.put_float(2, value).put_int(20, 1)
            elif isinstance(value, int):
                attribute.put_int(3, value).put_int(20, 2)
            else:  # a list of ints
                for item in value:
                    attribute.put_int(8, int(item))
                attribute.put_int(20, 7)
            proto.put_message(5, attribute)
        self.nodes.append(proto)
        return output


def model_bytes(weight: Callable[[str], Any], layers: int, heads: int, eps: float) -> bytes:
    """The ONNX model of the encoder's layers, weights included (`weight(name)` reads one
    tensor of `model.safetensors`). Inputs: `embedded` (batch, tokens, hidden) and `bias`
    (batch, 1, 1, tokens); output `hidden`, the last layer's states."""
    import numpy as np

    g = _Graph()
    hidden = int(weight("embeddings.LayerNorm.weight").shape[0])
    head = hidden // heads
    qkv_shape = g.constant("qkv_shape", np.array([0, 0, 3, heads, head], dtype=np.int64))
    back_shape = g.constant("back_shape", np.array([0, 0, hidden], dtype=np.int64))
    root2 = g.constant("root2", np.array(math.sqrt(2.0), dtype=np.float32))
    one = g.constant("one", np.array(1.0, dtype=np.float32))
    half = g.constant("half", np.array(0.5, dtype=np.float32))
    picks = [g.constant(f"pick{i}", np.array(i, dtype=np.int64)) for i in range(3)]

    def norm(x: str, prefix: str) -> str:
        scale = g.constant(f"{prefix}.w", weight(f"{prefix}.weight"))
        shift = g.constant(f"{prefix}.b", weight(f"{prefix}.bias"))
        return g.node("LayerNormalization", [x, scale, shift], axis=-1, epsilon=eps)

    def linear(x: str, matrix: Any, bias: Any, name: str) -> str:
        product = g.node("MatMul", [x, g.constant(f"{name}.w", matrix)])
        return g.node("Add", [product, g.constant(f"{name}.b", bias)])

    x = norm("embedded", "embeddings.LayerNorm")
    scale = np.float32(1.0 / math.sqrt(head))
    for index in range(layers):
        p = f"encoder.layer.{index}."

        def w(name: str, p: str = p) -> Any:
            return weight(p + name)

        attention = "attention.self."
        matrix = np.concatenate(
            [
                w(attention + "query.weight").T * scale,
                w(attention + "key.weight").T,
                w(attention + "value.weight").T,
            ],
            axis=1,
        )
        bias = np.concatenate(
            [
                w(attention + "query.bias") * scale,
                w(attention + "key.bias"),
                w(attention + "value.bias"),
            ]
        )
        qkv = linear(x, matrix, bias, f"l{index}.qkv")
        qkv = g.node("Reshape", [qkv, qkv_shape])  # (batch, tokens, 3, heads, head)
        qkv = g.node("Transpose", [qkv], perm=[2, 0, 3, 1, 4])  # (3, batch, heads, tokens, head)
        q, k, v = (g.node("Gather", [qkv, pick], axis=0) for pick in picks)
        scores = g.node("MatMul", [q, g.node("Transpose", [k], perm=[0, 1, 3, 2])])
        scores = g.node("Softmax", [g.node("Add", [scores, "bias"])], axis=-1)
        context = g.node("Transpose", [g.node("MatMul", [scores, v])], perm=[0, 2, 1, 3])
        context = g.node("Reshape", [context, back_shape])
        out = linear(
            context,
            w("attention.output.dense.weight").T,
            w("attention.output.dense.bias"),
            f"l{index}.out",
        )
        x = norm(g.node("Add", [out, x]), p + "attention.output.LayerNorm")
        up = linear(
            x, w("intermediate.dense.weight").T, w("intermediate.dense.bias"), f"l{index}.up"
        )
        erf = g.node("Erf", [g.node("Div", [up, root2])])
        gelu = g.node("Mul", [g.node("Mul", [up, g.node("Add", [erf, one])]), half])
        down = linear(gelu, w("output.dense.weight").T, w("output.dense.bias"), f"l{index}.down")
        x = norm(g.node("Add", [down, x]), p + "output.LayerNorm")
    x = g.node("Identity", [x])

    graph = _Proto()
    for node in g.nodes:
        graph.put_message(1, node)
    graph.put_text(2, "minilm")
    for tensor in g.weights:
        graph.put_message(5, tensor)
    graph.put_message(11, _value_info("embedded", ["batch", "tokens", hidden]))
    graph.put_message(11, _value_info("bias", ["batch", 1, 1, "tokens"]))
    # the output keeps the last node's name: rename it through an Identity's output
    graph.put_message(12, _value_info(x, ["batch", "tokens", hidden]))
    model = _Proto().put_int(1, IR_VERSION).put_text(2, "modes-tui")
    model.put_message(8, _Proto().put_text(1, "").put_int(2, OPSET))
    return model.put_message(7, graph).build()


def session(model: bytes) -> Any:
    """An onnxruntime session on two threads that never spin. Measured on 2 cores, an
    11-token message: 2.2 ms against 3.2 ms on one thread when the machine is quiet, and
    no worse than one thread with one or both cores busy (a spinning thread, as OpenBLAS's
    are, made a busy machine 4x slower)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = min(2, os.cpu_count() or 1)
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
