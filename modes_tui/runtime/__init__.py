"""The one place that wires concrete parts together, into a `Runtime` for one run.

A `Runtime` is built from the settings and the options of one run.

Every verb, the terminal UI, the REPL, the screenshots script, the benchmarks and the test
helpers get their pack, control file, session writer, MCP servers, engine, router and
classifier from a `Runtime`, so the copies cannot disagree.

Importing this module is cheap: litellm, textual, llama_cpp, YAML and Jinja2 load inside
the factories that need them (the terminal UI builds its runtime after the first frame).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from modes_tui.runtime.parts import (
    build_engine,
    check_model_names,
    classifier_services,
    load_pack,
    mcp_servers,
    offline_for,
    scripted_model,
)
from modes_tui.runtime.sessions import current_session, pack_for, resume_for

if TYPE_CHECKING:
    import argparse

    from modes_tui.core.config.models import ModelCatalog
    from modes_tui.core.engine.config import EngineConfig
    from modes_tui.core.engine.engine import Engine
    from modes_tui.core.engine.guards import Limits
    from modes_tui.core.engine.ports import Confirmer
    from modes_tui.core.history.ports import SessionWriter
    from modes_tui.core.model.ports import ChatModel
    from modes_tui.core.packs.profiles import Pack
    from modes_tui.core.paths import Dirs
    from modes_tui.core.routing.classifiers import ClassifierServices
    from modes_tui.core.routing.ports import Classifier, CorrectionSource
    from modes_tui.core.routing.router import Router
    from modes_tui.mcp.servers import McpServers
    from modes_tui.store.resume import CurrentSession, Resumption
    from modes_tui.store.settings import Settings
    from modes_tui.tui.services import AppServices, ControlStore, EngineFactory


@dataclass(frozen=True, slots=True)
class RunOptions:
    """What the command line asks of this run, on top of the settings."""

    pack: str | None = None
    """`--pack NAME`: the pack to use instead of the settings' one."""
    profiles: str | None = None
    """`--profiles DIR`: the pack in this folder."""
    model: str | None = None
    """`--model ID`: the model of every mode in this run (`scripted/...` answers offline)."""
    classifier: str | None = None
    """`--classifier NAME`: replaces the settings' and the pack's router backend."""
    resume: str | None = None
    """`--resume ID`: the saved session to carry on."""

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RunOptions:
        """The options of a parsed command line (a verb may lack some of them)."""
        return cls(
            pack=getattr(args, "pack", None),
            profiles=getattr(args, "profiles", None),
            model=getattr(args, "model", None),
            classifier=getattr(args, "classifier", None),
            resume=getattr(args, "resume", None),
        )


@dataclass(frozen=True, slots=True)
class Runtime:
    """Everything one run is made of, and the factories of what it runs."""

    dirs: Dirs
    """Where config, state and data live."""
    settings: Settings
    """What the user configured."""
    pack: Pack
    """The pack of modes of this run."""
    options: RunOptions = field(default_factory=RunOptions)
    """The command line's options."""
    cwd: Path = field(default_factory=Path.cwd)
    """The folder the tools work in."""
    control: ControlStore | None = None
    """The mode setting (the control file); None for verbs that do not chat."""
    session: SessionWriter | None = None
    """Where the turns are recorded; None records nothing."""
    servers: McpServers | None = None
    """The configured MCP servers (started on first use); the runner closes them."""
    model: ChatModel | None = None
    """A stand-in for the litellm adapter (a scripted model); None: `--model scripted/...`
    picks one, any other model is served by the litellm adapter."""
    resumed: Resumption | None = None
    """The saved session this run carries on (`--resume`)."""
    pack_note: str | None = None
    """What to tell the user about the pack a resumed session chose."""
    corrections: CorrectionSource | None = None
    """What the router learns from; None: the pack's store in the data dir."""

    # ------------------------------------------------------------------ building one

    @classmethod
    def load(
        cls,
        options: RunOptions = RunOptions(),
        *,
        settings: Settings | None = None,
        dirs: Dirs | None = None,
        pack: Pack | None = None,
    ) -> Runtime:
        """The settings and the pack, for a verb that routes or lists (nothing is opened)."""
        from modes_tui.core.paths import app_dirs

        dirs = dirs or app_dirs()
        if settings is None:
            settings = load_settings_for(options, dirs)
        if pack is None:
            pack = load_pack(settings.pack, options.profiles, settings)
        return cls(dirs, settings, pack, options)

    @classmethod
    def for_chat(
        cls,
        options: RunOptions,
        *,
        settings: Settings | None = None,
        dirs: Dirs | None = None,
        note: Callable[[str], object] | None = None,
    ) -> Runtime:
        """A chat's runtime: the resumed session read back, old runtime files swept, the
        control file, a session writer (the log is created at the first record) and the MCP
        servers (none started). `note` hears about the pack of a resumed session before the
        pack is loaded. The caller closes `session` and `servers`."""
        from modes_tui.core.paths import app_dirs
        from modes_tui.store.control import ControlFile
        from modes_tui.store.runtime import sweep

        dirs = dirs or app_dirs()
        if settings is None:
            settings = load_settings_for(options, dirs)
        resumed = resume_for(options.resume, dirs)
        pack_name, pack_note = pack_for(options, settings, resumed)
        if pack_note and note is not None:
            note(pack_note)
        pack = load_pack(pack_name, options.profiles, settings)
        sweep(dirs, settings.sweep_days)
        session = current_session(
            dirs,
            pack=pack.name,
            model=options.model or settings.default_model,
            fsync=settings.sessions_fsync,
        )
        if resumed is not None:
            session.attach(resumed)
        return cls(
            dirs,
            settings,
            pack,
            options,
            control=ControlFile(dirs.control_file, modes=lambda: pack.names, pack=pack.name),
            session=session,
            servers=mcp_servers(settings, dirs),
            model=scripted_model(options.model),
            resumed=resumed,
            pack_note=pack_note,
        )

    # ------------------------------------------------------------------ what it says

    @property
    def catalog(self) -> ModelCatalog:
        """The configured model aliases and the default model: the one model resolver."""
        return self.settings.catalog()

    @property
    def model_id(self) -> str:
        """The model of this run: `--model`, else the default model."""
        return self.options.model or self.settings.default_model

    @property
    def classifier_name(self) -> str | None:
        """`--classifier`, else the settings'; None: the pack's own."""
        return self.options.classifier or self.settings.router_classifier

    @property
    def offline(self) -> bool:
        """Whether no model this run may call needs the network."""
        return offline_for(self.pack, self.catalog, self.options.model)

    @property
    def current(self) -> CurrentSession | None:
        """The session writer when it is a resumable one (a chat's)."""
        from modes_tui.store.resume import CurrentSession

        return self.session if isinstance(self.session, CurrentSession) else None

    # ------------------------------------------------------------------ factories

    def stand_in(self) -> ChatModel | None:
        """The model that replaces the litellm adapter in this run, if any."""
        return self.model if self.model is not None else scripted_model(self.options.model)

    def engine(self, confirm: Confirmer | None = None, *, limits: Limits | None = None) -> Engine:
        """The engine, carrying on the resumed session's conversation when there is one.
        Raises `MissingLocalParts` (how to get a model) when the embedded model would answer
        and it is not installed."""
        from modes_tui.runtime.local_parts import check_for_answers

        check_for_answers(self)
        engine = build_engine(
            self.engine_config(limits),
            pack=self.pack,
            classifier=self.classifier_name,
            session=self.session,
            control=self.control,
            confirm=confirm,
            model=self.stand_in(),
            corrections=self.corrections,
            servers=self.servers,
            dirs=self.dirs,
            offline=self.offline,
            local_model_path=self.settings.local_model_path,
        )
        if self.resumed is not None:
            self.resumed.restore_into(engine)
        return engine

    def engine_config(self, limits: Limits | None = None) -> EngineConfig:
        """The settings this run's engine answers with (`limits`: the shipped ones)."""
        from modes_tui.core.engine.config import EngineConfig
        from modes_tui.core.engine.guards import Limits

        return EngineConfig(
            default_model=self.settings.default_model,
            models=self.catalog,
            model_override=self.options.model,
            cwd=self.cwd,
            limits=limits or Limits(),
            budget=self.settings.budget,
        )

    def classifier_services(self) -> ClassifierServices:
        """The backends' factories, with the settings' default model and aliases."""
        services = classifier_services(self.settings.default_model, self.catalog)
        if self.corrections is not None:
            services.corrections = self.corrections
        return services

    def classifier(self, corrections: CorrectionSource | None = None) -> Classifier:
        """The classifier in force (`--classifier`, the settings', the pack's), built."""
        from modes_tui.core.routing.classifiers import build_classifier

        services = self.classifier_services()
        if corrections is not None:
            services.corrections = corrections
        return build_classifier(self.pack, self.classifier_name, services)

    def router(self) -> Router:
        """A router over this pack with the classifier in force (no conversation state)."""
        from modes_tui.core.routing.router import Router

        return Router(self.pack, self.classifier())

    def app_services(self, build_engine: EngineFactory, **extra: Any) -> AppServices:
        """What the terminal UI is given: this pack, model and control, and `build_engine`
        (tests and demos pass their own engines; `tui_services` passes the real one)."""
        from modes_tui.tui.services import AppServices

        if self.control is None:
            raise ValueError("the terminal UI needs a control file: build the runtime for_chat")
        return AppServices(
            pack=self.pack,
            model=self.model_id,
            control=self.control,
            build_engine=build_engine,
            **extra,
        )

    def tui_services(self) -> AppServices:
        """Everything the terminal UI needs; the engine is built (and a local model loaded,
        with a progress bar) in the app's worker."""
        from modes_tui.llm.litellm_import import preload
        from modes_tui.store.settings import save_setting
        from modes_tui.tui.sessions import StoreSessions
        from modes_tui.tui.startup import LoadProgress

        progress = LoadProgress()
        scripted = self.stand_in() is not None
        offline = self.offline

        def engine(confirm: Confirmer) -> Engine:
            progress.report("building the router", 0.02)
            built = self.engine(confirm)
            # Asking a capability imports litellm and, for the embedded model, registers
            # it; then the model is assembled and loaded here, with a bar, not at the first
            # message.
            progress.report("importing litellm", 0.1)
            built.model.capabilities(self.model_id)
            if not scripted and self.model_id.startswith("local/"):
                from modes_tui.llm.local import warm_up

                warm_up(progress.stage(0.3, 1.0))
            return built

        session = self.current
        return self.app_services(
            engine,
            sessions=StoreSessions(self.dirs, self.router),
            preload=None if scripted else lambda: preload(offline=offline),
            keymap=dict(self.settings.keymap),
            keymap_origin=self.settings.origin("keymap"),
            theme=self.settings.theme,
            theme_origin=self.settings.origin("theme"),
            save_theme=lambda name: save_setting(self.dirs, "theme", name),
            load_progress=progress,
            session_id=(lambda: session.id) if session is not None else (lambda: None),
            current=session,
            resumed=self.resumed,
            tune_gc=True,
            warnings=[
                *self.settings.warnings,
                *([self.pack_note] if self.pack_note else []),
                *([hint] if (hint := self.first_start_hint()) else []),
            ],
        )

    def first_start_hint(self) -> str | None:
        """One line offering `modes-tui init` when nothing says which model to use: no
        config.yaml, no MODES_TUI_* setting and no --model (a hint, not a question: the
        app must take typing at once, and init probes the machine)."""
        configured = {"default_model", "models", "roles"} & set(self.settings.origins)
        if self.options.model or configured or self.dirs.settings_file.exists():
            return None
        return (
            "no config.yaml yet: the embedded offline demo model answers. "
            "`modes-tui init` finds your providers (API keys, Ollama, LM Studio, llama.cpp) "
            "and writes one"
        )


def load_settings_for(options: RunOptions, dirs: Dirs) -> Settings:
    """The settings with this run's options on top (`--pack`, `--classifier`)."""
    from modes_tui.store.settings import load_settings

    overrides = {"pack": options.pack, "router_classifier": options.classifier}
    return load_settings(dirs, overrides=overrides)


__all__ = ["build_engine", "check_model_names", "classifier_services", "load_pack", "mcp_servers"]
__all__ += ["current_session", "offline_for", "pack_for", "resume_for", "scripted_model"]
__all__ += ["RunOptions", "Runtime", "load_settings_for"]
