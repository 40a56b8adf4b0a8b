"""The parts a `Runtime` is wired from, each a factory that loads its libraries on use:
the pack, the MCP servers, a stand-in model, the classifier backends and the engine."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from modes_tui.core.config.models import ModelCatalog
    from modes_tui.core.config.ports import ControlSource
    from modes_tui.core.engine.config import EngineConfig
    from modes_tui.core.engine.engine import Engine
    from modes_tui.core.engine.ports import Confirmer
    from modes_tui.core.history.ports import SessionWriter
    from modes_tui.core.model.ports import ChatModel
    from modes_tui.core.packs.profiles import Pack
    from modes_tui.core.paths import Dirs
    from modes_tui.core.routing.classifiers import ClassifierServices
    from modes_tui.core.routing.ports import CorrectionSource
    from modes_tui.mcp.servers import McpServers
    from modes_tui.store.settings import Settings


def load_pack(
    name: str | None = None,
    folder: str | os.PathLike[str] | None = None,
    settings: Settings | None = None,
) -> Pack:
    """`core.packs.profiles.load_pack`, imported on first use: YAML and Jinja2 stay off the path
    to the terminal UI's first frame (it loads the pack in a worker). With `settings`, a
    profile's `mcp:` must name configured MCP servers."""
    from modes_tui.core.packs.profiles import load_pack as load

    servers = frozenset(settings.mcp_servers) if settings is not None else None
    return load(name, folder, known_servers=servers)


def mcp_servers(settings: Settings, dirs: Dirs | None = None) -> McpServers | None:
    """The configured MCP servers (none is started here), or None when there are none."""
    if not settings.mcp_servers:
        return None
    from modes_tui.core.paths import app_dirs
    from modes_tui.mcp.servers import McpServers

    return McpServers(settings.mcp_servers, log_dir=(dirs or app_dirs()).state / "mcp")


def scripted_model(model_id: str | None) -> ChatModel | None:
    """A scripted model for `--model scripted/...` (offline demos and tests), else None."""
    from modes_tui.llm.fake import (
        SCRIPTED_PREFIX,
        ScriptedModel,
        command_responder,
        echo_responder,
        edit_responder,
        slow_responder,
    )

    if model_id and model_id.startswith(SCRIPTED_PREFIX):
        special = {"slow": slow_responder, "command": command_responder, "edit": edit_responder}
        name = model_id.removeprefix(SCRIPTED_PREFIX)
        return ScriptedModel(responder=special.get(name, echo_responder))
    return None


def offline_for(pack: Pack, catalog: ModelCatalog, override: str | None) -> bool:
    """Whether no model in use needs the network: the override (or the default model),
    else every profile's model and fallback models."""
    from modes_tui.llm.litellm_model import is_remote

    used = {override or catalog.default_model}
    if override is None:
        used |= {p.model for p in pack.profiles if p.model != "default"}
        used |= {name for p in pack.profiles for name in p.fallback_models}
    return not any(is_remote(catalog.resolve(name).model) for name in used)


def classifier_services(
    default_model: str = "default", models: ModelCatalog | None = None
) -> ClassifierServices:
    """Factories for the backends that need a model or an encoder (each imports its
    libraries only when it builds a classifier). `default_model` is what `model: default`
    in router.yaml stands for (settings' default_model; else the embedded model); `models`
    are the configured aliases a router model may name."""
    from modes_tui.core.routing.classifiers import ClassifierServices
    from modes_tui.llm.router_backends import backend_factories

    def chat_model() -> ChatModel:
        from modes_tui.llm.litellm_model import LiteLLMChatModel

        return LiteLLMChatModel(models=models)

    return ClassifierServices(factories=backend_factories(chat_model), default_model=default_model)


def build_engine(
    config: EngineConfig,
    *,
    pack: Pack,
    classifier: str | None = None,
    session: SessionWriter | None = None,
    control: ControlSource | None = None,
    confirm: Confirmer | None = None,
    model: ChatModel | None = None,
    corrections: CorrectionSource | None = None,
    servers: McpServers | None = None,
    dirs: Dirs | None = None,
    offline: bool | None = None,
    local_model_path: Path | None = None,
) -> Engine:
    """An engine that answers with `config` (its settings) over `pack`, wired from its parts.

    `classifier` overrides the pack's router backend. `model` replaces the litellm adapter (a
    `ScriptedModel` for demos and screenshots); without it, every model name in use is checked
    (a name that is neither an alias of `config.models` nor a litellm id is a SettingsError
    naming where it was written) and the adapter is built: `offline` None means offline
    exactly when no model in use needs the network, `local_model_path` is the embedded
    model's file. `corrections` is what the router learns from (default: the pack's store,
    `<data>/corrections/<pack>.jsonl`). `servers` are the MCP servers modes may list; the
    caller closes them. Loads no model library.
    """
    from modes_tui.core.edits.editor import session_tools
    from modes_tui.core.engine.engine import Engine
    from modes_tui.core.engine.ports import CorrectionRecorder
    from modes_tui.core.paths import app_dirs
    from modes_tui.core.routing.classifiers import build_classifier
    from modes_tui.core.routing.router import Router

    dirs = dirs or app_dirs()
    catalog = config.catalog
    if model is None:
        model = _chat_model(pack, config, catalog, dirs, offline, local_model_path)
    services = classifier_services(config.default_model, catalog)
    if corrections is None:
        from modes_tui.store.corrections import CorrectionStore

        corrections = CorrectionStore.for_pack(dirs.data, pack.name)
    services.corrections = corrections
    router = Router(pack, build_classifier(pack, classifier, services), inputs=config.inputs)
    return Engine(
        config=config,
        pack=pack,
        router=router,
        model=model,
        control=control,
        session=session,
        tools=session_tools(config.cwd, pack=pack),
        confirm=confirm,
        # the same store the router reads: a correction counts on the very next route
        corrections=corrections if isinstance(corrections, CorrectionRecorder) else None,
        servers=servers,
    )


def _chat_model(
    pack: Pack,
    config: EngineConfig,
    catalog: ModelCatalog,
    dirs: Dirs,
    offline: bool | None,
    local_model_path: Path | None,
) -> ChatModel:
    """The litellm adapter, after every model name in use is checked."""
    from modes_tui.llm.litellm_model import LiteLLMChatModel

    check_model_names(pack, catalog, config.model_override)
    if offline is None:
        offline = offline_for(pack, catalog, config.model_override)
    return LiteLLMChatModel(
        offline=offline,
        local_model_path=local_model_path,
        data_dir=dirs.data,
        models=catalog,
    )


def check_model_names(pack: Pack, catalog: ModelCatalog, override: str | None) -> None:
    """Every model name in use is `default`, an alias or a litellm id; else a SettingsError."""
    from modes_tui.core.errors import SettingsError

    if override is not None and (why := catalog.unknown(override)):
        raise SettingsError(f"--model: {why}")
    if (why := catalog.unknown(catalog.default_model)) is not None:
        raise SettingsError(f"default_model: {why}")
    for profile in pack.profiles:
        names = [("model", profile.model)]
        names += [(f"fallback_models[{i}]", n) for i, n in enumerate(profile.fallback_models)]
        for key, name in names:
            why = catalog.unknown(name)
            if why is not None:
                raise SettingsError(f"{profile.source or profile.name}: {key}: {why}")
