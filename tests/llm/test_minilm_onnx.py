"""The encoder's ONNX graph: valid ONNX (parsed by the `onnx` package, not only by
onnxruntime), the same vectors as the numpy layers, and the numpy layers when onnxruntime
is missing or turned off."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from modes_tui.llm.encoders import REFERENCE_ENV, MiniLMEncoder
from modes_tui.llm.minilm_onnx import OPSET, model_bytes

pytestmark = pytest.mark.local

TEXTS = ["fix the failing test in parser.py", "hi", "translate this into German: 'good night'"]


@pytest.fixture(scope="module")
def encoder() -> MiniLMEncoder:
    return MiniLMEncoder()


def test_the_graph_is_valid_onnx_with_every_layer(encoder: MiniLMEncoder) -> None:
    onnx = pytest.importorskip("onnx")
    data = model_bytes(lambda name: encoder._weights[name], encoder.layers, encoder.heads, 1e-12)
    model = onnx.load_from_string(data)
    onnx.checker.check_model(model)
    assert model.opset_import[0].version == OPSET
    ops = [node.op_type for node in model.graph.node]
    assert ops.count("LayerNormalization") == 1 + 2 * encoder.layers
    assert ops.count("Softmax") == encoder.layers
    assert [i.name for i in model.graph.input] == ["embedded", "bias"]


def test_onnxruntime_and_numpy_give_the_same_vectors_alone_and_padded(
    encoder: MiniLMEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert encoder.runtime == "onnxruntime"
    monkeypatch.setenv(REFERENCE_ENV, "numpy")
    numpy_layers = MiniLMEncoder()
    assert numpy_layers.runtime == "numpy"
    batched = encoder.encode(TEXTS)  # padded to the longest, with an attention bias
    alone = np.stack([encoder.encode([text])[0] for text in TEXTS])
    expected = numpy_layers.encode(TEXTS)
    assert np.abs(batched - expected).max() <= 1e-5
    assert np.abs(alone - expected).max() <= 1e-5


def test_without_onnxruntime_the_numpy_layers_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails as if not installed
    encoder = MiniLMEncoder()
    assert encoder.runtime == "numpy"
    assert encoder.encode(["hello"]).shape == (1, 384)


def test_a_graph_that_fails_to_load_leaves_the_numpy_layers_and_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from modes_tui.llm import minilm_onnx

    def broken(model: bytes) -> object:
        raise RuntimeError("this CPU lacks an instruction")

    monkeypatch.setattr(minilm_onnx, "session", broken)
    encoder = MiniLMEncoder()
    assert encoder.runtime == "numpy"
    assert "onnxruntime could not load the encoder; using numpy" in caplog.text
