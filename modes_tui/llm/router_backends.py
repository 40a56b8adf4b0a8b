"""Factories for the routing backends that need a model or an encoder.

`runtime.classifier_services()` hands these to `build_classifier`. Each factory imports what
it needs when it runs, so wiring them costs nothing: numpy loads when an embedding
classifier is built, litellm at the first chat or judge call (or the judge's capability
check), torch never (see `encoders.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from modes_tui.core.config.models import EMBEDDED_MODEL, resolve_model
from modes_tui.core.errors import DeclarationError, Problem

__all__ = ["EMBEDDED_MODEL", "backend_factories", "default_chat_model", "resolve_model"]

if TYPE_CHECKING:
    from modes_tui.core.model.ports import ChatModel
    from modes_tui.core.packs.profiles import Pack
    from modes_tui.core.routing.classifiers import BackendFactory, ClassifierServices
    from modes_tui.core.routing.ports import Classifier, CorrectionSource

ChatModelFactory = Callable[[], "ChatModel"]


def default_chat_model() -> ChatModel:
    """The litellm adapter (litellm itself is imported at the first call)."""
    from modes_tui.llm.litellm_model import LiteLLMChatModel

    return LiteLLMChatModel()


def corrections_of(pack: Pack, services: ClassifierServices) -> CorrectionSource:
    """The services' corrections, else the pack's store in the data dir (made once and
    shared, so a cascade's two stages read one file)."""
    if services.corrections is None:
        from modes_tui.core.paths import app_dirs
        from modes_tui.store.corrections import CorrectionStore

        services.corrections = CorrectionStore.for_pack(app_dirs().data, pack.name)
    return services.corrections


def backend_factories(
    chat_model: ChatModelFactory = default_chat_model,
) -> dict[str, BackendFactory]:
    """`embedding`, `chat`, `judge` and `cascade`, ready for `ClassifierServices`."""
    shared: list[ChatModel] = []

    def model_instance() -> ChatModel:
        if not shared:
            shared.append(chat_model())
        return shared[0]

    def embedding(pack: Pack, services: ClassifierServices) -> Classifier:
        from modes_tui.core.paths import app_dirs
        from modes_tui.core.routing.classifiers.embedding import EmbeddingCache, EmbeddingClassifier
        from modes_tui.llm.encoders import check_encoder, load_encoder

        spec = pack.router.encoder
        check_encoder(spec)
        return EmbeddingClassifier(
            lambda: load_encoder(spec),
            encoder_name=spec,
            modes=pack.profiles,
            cache=EmbeddingCache(app_dirs().cache / "embeddings"),
            corrections=corrections_of(pack, services),
            fallback=pack.router.fallback,
            threshold=pack.router.below_confidence,
        )

    def chat(pack: Pack, services: ClassifierServices) -> Classifier:
        from modes_tui.core.routing.classifiers.chat import ChatClassifier

        model = resolve_model(pack.router.model, services.default_model)
        return ChatClassifier(model_instance(), model, corrections=corrections_of(pack, services))

    def judge(pack: Pack, services: ClassifierServices) -> Classifier:
        from modes_tui.core.routing.classifiers.judge import LABELS, JudgeClassifier

        if len(pack.profiles) > len(LABELS):
            raise DeclarationError(
                [
                    Problem(
                        "router.yaml",
                        "classifier",
                        f"the judge backend labels at most {len(LABELS)} modes; this pack has "
                        f"{len(pack.profiles)}",
                    )
                ],
                pack=pack.name,
            )
        model = resolve_model(pack.router.model, services.default_model)
        return JudgeClassifier(model_instance(), model, corrections=corrections_of(pack, services))

    def cascade(pack: Pack, services: ClassifierServices) -> Classifier:
        from modes_tui.core.routing.classifiers import build_classifier
        from modes_tui.core.routing.classifiers.cascade import CascadeClassifier
        from modes_tui.core.routing.classifiers.embedding import EmbeddingClassifier

        config = pack.router.cascade
        if config is None:
            raise DeclarationError(
                [
                    Problem(
                        "router.yaml",
                        "cascade",
                        "missing; the cascade classifier needs "
                        "cascade: {first: embedding, then: chat, below: 0.6}",
                    )
                ],
                pack=pack.name,
            )
        first = build_classifier(pack, config.first, services)
        then = build_classifier(pack, config.then, services)
        # A chat or judge stage picks the corrections for its prompt by embedding when the
        # embedding stage has an encoder loaded anyway (lexically otherwise).
        if isinstance(first, EmbeddingClassifier) and hasattr(then, "similarity"):
            then.similarity = first.similarity
        return CascadeClassifier(first, then, config.below)

    return {"embedding": embedding, "chat": chat, "judge": judge, "cascade": cascade}
