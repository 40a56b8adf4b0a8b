"""The command line, and the one place that wires concrete parts together.

Exit codes: 0 ok, 1 failure (the message says what to do), 2 usage error.
Errors go to stderr as one readable message, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from modes_tui import __version__
from modes_tui.core.errors import DeclarationError, ModesError, UnknownMode
from modes_tui.core.models import EMBEDDED_MODEL, ModelCatalog
from modes_tui.core.paths import HOME_ENV
from modes_tui.session_cli import add_resume_option, add_session_verbs

if TYPE_CHECKING:
    from modes_tui.core.corrections import CorrectionSource
    from modes_tui.core.engine import Engine
    from modes_tui.core.guards import Limits
    from modes_tui.core.paths import Dirs
    from modes_tui.core.ports import ChatModel, Confirmer, ControlSource
    from modes_tui.core.profiles import Pack
    from modes_tui.core.records import SessionWriter
    from modes_tui.mcp.servers import McpServers
    from modes_tui.store.resume import CurrentSession
    from modes_tui.store.settings import Settings
    from modes_tui.tui.services import AppServices

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


def load_pack(
    name: str | None = None,
    folder: str | os.PathLike[str] | None = None,
    settings: Settings | None = None,
) -> Pack:
    """`core.profiles.load_pack`, imported on first use: YAML and Jinja2 stay off the path
    to the terminal UI's first frame (it loads the pack in a worker). With `settings`, a
    profile's `mcp:` must name configured MCP servers."""
    from modes_tui.core.profiles import load_pack as load

    servers = frozenset(settings.mcp_servers) if settings is not None else None
    return load(name, folder, known_servers=servers)


def mcp_servers(settings: Settings, dirs: Dirs | None = None) -> McpServers | None:
    """The configured MCP servers (none is started here), or None when there are none."""
    if not settings.mcp_servers:
        return None
    from modes_tui.core.paths import app_dirs
    from modes_tui.mcp.servers import McpServers

    return McpServers(settings.mcp_servers, log_dir=(dirs or app_dirs()).state / "mcp")


# --------------------------------------------------------------------------- wiring


def classifier_services(default_model: str = "default", models: ModelCatalog | None = None) -> Any:
    """Factories for the backends that need a model or an encoder (each imports its
    libraries only when it builds a classifier). `default_model` is what `model: default`
    in router.yaml stands for (settings' default_model; else the embedded model); `models`
    are the configured aliases a router model may name."""
    from modes_tui.core.classifiers import ClassifierServices
    from modes_tui.llm.router_backends import backend_factories

    def chat_model() -> ChatModel:
        from modes_tui.llm.litellm_model import LiteLLMChatModel

        return LiteLLMChatModel(models=models)

    return ClassifierServices(factories=backend_factories(chat_model), default_model=default_model)


DEFAULT_MODEL = EMBEDDED_MODEL
"""The model `default` stands for when no setting or option names one: the embedded one."""


def build_engine(
    *,
    pack: Pack,
    model_id: str | None = None,
    model_override: str | None = None,
    classifier: str | None = None,
    session: SessionWriter | None = None,
    control: ControlSource | None = None,
    confirm: Confirmer | None = None,
    dirs: Dirs | None = None,
    cwd: Path | None = None,
    offline: bool | None = None,
    local_model_path: Path | None = None,
    limits: Limits | None = None,
    inputs: Mapping[str, Any] | None = None,
    model: ChatModel | None = None,
    corrections: CorrectionSource | None = None,
    models: ModelCatalog | None = None,
    budget: float | None = None,
    servers: McpServers | None = None,
) -> Engine:
    """The engine the TUI and the REPL run, wired from concrete parts. Loads no model library.

    `model_id` is the default model (the setting; profiles' `model: default` resolve to it;
    `local/gemma-3-270m` when None). `model_override` is `--model`: it replaces the model of
    every mode. `classifier` overrides the pack's router backend. `offline` None means
    offline exactly when no model in use needs the network. `model` replaces the litellm
    adapter (a `ScriptedModel` for demos and screenshots). `corrections` is what the router
    learns from (default: the pack's store, `<data>/corrections/<pack>.jsonl`). `models` are
    the configured aliases (any model name above may be one); a name that is neither an alias
    nor a litellm id is a SettingsError naming where it was written. `budget` is USD per
    session. `servers` are the MCP servers modes may list; the caller closes them.
    """
    from modes_tui.core.classifiers import build_classifier
    from modes_tui.core.correcting import CorrectionRecorder
    from modes_tui.core.engine import Engine
    from modes_tui.core.guards import Limits
    from modes_tui.core.paths import app_dirs
    from modes_tui.core.routing import Router
    from modes_tui.core.toolbox import default_registry
    from modes_tui.llm.litellm_model import LiteLLMChatModel, is_remote

    dirs = dirs or app_dirs()
    cwd = cwd or Path.cwd()
    default_model = model_id or DEFAULT_MODEL
    catalog = ModelCatalog(dict(models.entries) if models else {}, default_model)
    if model is None:
        check_model_names(pack, catalog, model_override)
    if offline is None:
        used = {model_override or default_model}
        if model_override is None:
            used |= {p.model for p in pack.profiles if p.model != "default"}
            used |= {name for p in pack.profiles for name in p.fallback_models}
        offline = not any(is_remote(catalog.resolve(name).model) for name in used)
    if model is None:
        model = LiteLLMChatModel(
            offline=offline,
            local_model_path=local_model_path,
            data_dir=dirs.data,
            models=catalog,
        )
    services = classifier_services(default_model, catalog)
    if corrections is None:
        from modes_tui.store.corrections import CorrectionStore

        corrections = CorrectionStore.for_pack(dirs.data, pack.name)
    services.corrections = corrections
    router = Router(pack, build_classifier(pack, classifier, services), inputs=inputs)
    return Engine(
        pack=pack,
        router=router,
        model=model,
        default_model=default_model,
        control=control,
        session=session,
        tools=default_registry(cwd, pack=pack),
        confirm=confirm,
        cwd=cwd,
        model_override=model_override,
        limits=limits or Limits(),
        inputs=inputs,
        # the same store the router reads: a correction counts on the very next route
        corrections=corrections if isinstance(corrections, CorrectionRecorder) else None,
        budget=budget,
        servers=servers,
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


def open_pack(args: argparse.Namespace) -> Pack:
    """The pack named by --profiles, else --pack, else the settings' pack."""
    settings = _settings(args)
    return load_pack(settings.pack, getattr(args, "profiles", None), settings)


def settings_classifier(args: argparse.Namespace, pack: Pack) -> Any:
    """The classifier in force: --classifier, else the settings', else the pack's; `model:
    default` in router.yaml means the settings' default model, as in chat."""
    from modes_tui.core.classifiers import build_classifier

    settings = _settings(args)
    services = classifier_services(settings.default_model, settings.catalog())
    return build_classifier(pack, settings.router_classifier, services)


# --------------------------------------------------------------------------- verbs


def cmd_profiles(args: argparse.Namespace) -> int:
    """List the modes of a pack; with --check, validate it and list every problem."""
    try:
        pack = open_pack(args)
    except DeclarationError as error:
        print(str(error), file=sys.stderr)
        if args.check:
            print(
                "fix the problems above and run `modes-tui profiles --check` again", file=sys.stderr
            )
        return EXIT_FAILURE
    if args.json:
        print(
            json.dumps(
                {
                    "pack": pack.name,
                    "path": str(pack.path),
                    "router": {
                        "classifier": pack.router.classifier,
                        "fallback": pack.router.fallback,
                        "below_confidence": pack.router.below_confidence,
                        "sticky": pack.router.sticky,
                    },
                    "modes": [profile.summary() for profile in pack.profiles],
                },
                indent=2,
            )
        )
        return EXIT_OK
    if args.check:
        print(f"pack {pack.name!r} is valid: {len(pack.profiles)} modes ({pack.path})")
        return EXIT_OK
    print(f"pack {pack.name} ({pack.path})")
    print(
        f"router: {pack.router.classifier}, fallback {pack.router.fallback}, "
        f"below_confidence {pack.router.below_confidence}, sticky {pack.router.sticky}"
    )
    width = max(len(p.name) for p in pack.profiles)
    for profile in pack.profiles:
        marks = [] if profile.is_available() else ["unavailable"]
        if profile.name == pack.router.fallback:
            marks.append("fallback")
        if profile.auto_enter != "allow":
            marks.append("asks first" if profile.auto_enter == "confirm" else "only when forced")
        tools = ", ".join([*profile.tools, *(f"mcp:{name}" for name in profile.mcp)])
        tools = tools or "no tools"
        extra = f" [{', '.join(marks)}]" if marks else ""
        print(f"  {profile.name:<{width}}  thinking {profile.thinking:<6} {tools}{extra}")
        print(f"  {'':<{width}}  {profile.description}")
    return EXIT_OK


def _terminal_safe(text: str) -> str:
    from modes_tui.core.terminal_text import terminal_safe

    return terminal_safe(text)


def _print(text: str, end: str = "\n") -> None:
    """Print text that holds words from outside (models, sessions) with nothing a terminal
    would obey (see core.terminal_text)."""
    print(_terminal_safe(text), end=end)


def _print_json(value: Any) -> None:
    """Pretty JSON; the same value for a parser, inert on a terminal."""
    from modes_tui.core.terminal_text import json_terminal_safe

    print(json_terminal_safe(json.dumps(value, indent=2, ensure_ascii=False, default=str)))


def cmd_tools(args: argparse.Namespace) -> int:
    """Every tool each mode gets, with its source; MCP servers are started to list theirs."""
    from modes_tui.core.toolbox import default_registry
    from modes_tui.mcp.listing import list_mode_tools, listing_text

    settings = _settings(args)
    pack = open_pack(args)
    if args.mode is not None and pack.get(args.mode) is None:
        raise UnknownMode(args.mode, pack.names)
    profiles = [p for p in pack.profiles if args.mode in (None, p.name)]
    registry = default_registry(Path.cwd(), pack=pack)
    listing = asyncio.run(list_mode_tools(profiles, registry, mcp_servers(settings)))
    if args.json:
        data = {"pack": pack.name, "modes": [entry.to_dict() for entry in listing]}
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        _print(listing_text(listing))  # tool descriptions come from MCP servers
    return EXIT_FAILURE if any(entry.problems for entry in listing) else EXIT_OK


def cmd_route(args: argparse.Namespace) -> int:
    """Dry run: which mode would take this message. No answer is generated."""
    from modes_tui.core.conversation import Message
    from modes_tui.core.routing import Router
    from modes_tui.route_format import verb_text

    pack = open_pack(args)
    text = " ".join(args.text)
    if text == "-":
        text = _read_stdin()
    if not text.strip():
        raise ModesError(
            'nothing to route: give a message, e.g. modes-tui route "why does my build fail"'
        )
    router = Router(pack, settings_classifier(args, pack))
    route = asyncio.run(router.route([Message("user", text)]))
    if args.json:
        _print_json(route.to_dict())
    else:
        _print(verb_text(route))  # the reason may be a routing model's words
    if route.error is not None:
        # the fallback printed above is what the app would do; a script must still see
        # that the classifier it asked for did not decide
        used = route.classifier.with_ if route.classifier is not None else "routing"
        print(
            _terminal_safe(f"modes-tui: the {used} classifier failed: {route.reason}"),
            file=sys.stderr,
        )
        return EXIT_FAILURE
    return EXIT_OK


def _read_stdin() -> str:
    """All of stdin as text; bytes that are not UTF-8 or NULs are named on stderr."""
    from modes_tui.core.terminal_text import decode_typed

    text, notes = decode_typed(sys.stdin.buffer.read(), "stdin")
    for note in notes:
        print(f"modes-tui: warning: {note}", file=sys.stderr)
    return text


def cmd_eval(args: argparse.Namespace) -> int:
    """Route every line of an eval file and score the routes; --fit tunes the threshold."""
    from modes_tui.core.classifiers import build_classifier
    from modes_tui.core.eval_cases import read_eval_file
    from modes_tui.core.eval_text import format_fit, format_report
    from modes_tui.core.evaluation import evaluate, fit_threshold, route_cases

    pack = open_pack(args)
    cases = read_eval_file(args.file, pack.names)
    if args.learn:
        return eval_learn(args, pack, cases)
    classifier = build_classifier(pack, args.classifier, classifier_services())
    progress = _progress_printer() if len(cases) >= 20 else None
    outcomes = asyncio.run(route_cases(pack, classifier, cases, progress))
    config = pack.router
    report = evaluate(outcomes, pack.names, config.fallback, config.below_confidence)
    fit = fit_threshold(outcomes, pack.names, config.fallback) if args.fit else None
    info = outcomes[0].route.classifier if outcomes else None
    used = info.with_ + (f" ({info.model})" if info and info.model else "") if info else "-"
    if args.json:
        data: dict[str, Any] = {"file": args.file, "pack": pack.name, "classifier": used}
        data.update(report.to_dict())
        if fit is not None:
            data["fit"] = fit.to_dict()
        print(json.dumps(data, indent=2))
        return EXIT_OK
    title = f"{args.file}: {len(cases)} cases, pack {pack.name}, classifier {used}"
    print(format_report(report, title=title))
    if fit is not None:
        print()
        print(format_fit(fit, config.below_confidence))
    return EXIT_OK


def eval_learn(args: argparse.Namespace, pack: Pack, cases: Sequence[Any]) -> int:
    """`eval --learn`: route line by line, each wrong route becoming a correction."""
    from modes_tui.core.classifiers import build_classifier
    from modes_tui.core.learning import format_curve, learn_from_cases
    from modes_tui.core.paths import app_dirs
    from modes_tui.store.corrections import CorrectionStore

    if args.fit or args.block < 1:
        raise ModesError("--learn takes no --fit, and --block needs at least 1 line")
    store = CorrectionStore.for_pack(app_dirs().data, pack.name)
    services = classifier_services()
    services.corrections = store
    classifier = build_classifier(pack, args.classifier, services)
    progress = _progress_printer() if len(cases) >= 20 else None
    curve = asyncio.run(learn_from_cases(pack, classifier, cases, store, args.block, progress))
    if args.json:
        data = {"file": args.file, "pack": pack.name, "store": str(store.path), **curve.to_dict()}
        print(json.dumps(data, indent=2))
        return EXIT_OK
    print(format_curve(curve, title=f"{args.file}: {len(cases)} cases, pack {pack.name}, learning"))
    print(
        f"\ncorrections are in {store.path} ({len(store.corrections())} in all); "
        f"`modes-tui corrections clear --pack {pack.name}` undoes them"
    )
    return EXIT_OK


def _progress_printer() -> Any:
    """Progress on stderr: a bar redrawn in place on a terminal, a line per quarter elsewhere."""
    tty = sys.stderr.isatty()

    def show(done: int, total: int) -> None:
        if tty:
            filled = int(30 * done / total)
            end = "\n" if done == total else ""
            bar = "#" * filled + "." * (30 - filled)
            print(f"\rrouting [{bar}] {done}/{total}", end=end, file=sys.stderr, flush=True)
        elif done == total or done % max(1, total // 4) == 0:
            print(f"routing {done}/{total}", file=sys.stderr, flush=True)

    return show


# --------------------------------------------------------------------------- state and sessions


def _settings(args: argparse.Namespace) -> Settings:
    """Settings with this command's options on top; warnings go to stderr (once)."""
    cached = getattr(args, "_settings", None)
    if cached is not None:
        return cached
    from modes_tui.core.paths import app_dirs
    from modes_tui.store.settings import load_settings

    overrides = {
        "pack": getattr(args, "pack", None),
        "router_classifier": getattr(args, "classifier", None),
    }
    settings = load_settings(app_dirs(), overrides=overrides)
    for warning in settings.warnings:
        print(f"modes-tui: warning: {warning}", file=sys.stderr)
    args._settings = settings
    return settings


WARNINGS_SHOWN = 20
"""A binary or badly broken file has a problem on every line: the first ones say enough."""


def _warn(problems: Sequence[object]) -> None:
    for problem in problems[:WARNINGS_SHOWN]:
        print(_terminal_safe(f"modes-tui: warning: {problem}"), file=sys.stderr)
    if len(problems) > WARNINGS_SHOWN:
        more = len(problems) - WARNINGS_SHOWN
        print(f"modes-tui: warning: … and {more} more problem(s) like these", file=sys.stderr)


def _setting_meaning(mode: str) -> str:
    if mode == "auto":
        return "the router picks the mode of every turn"
    if mode == "off":
        return "no mode: the base prompt and the default model only"
    return f"every turn goes to {mode}; `modes-tui mode auto` hands it back to the router"


def cmd_mode(args: argparse.Namespace) -> int:
    """Show the control setting and the routing rule in force, or set the setting."""
    from modes_tui.core.control import AUTO, OFF
    from modes_tui.core.paths import app_dirs
    from modes_tui.store.control import ControlFile

    dirs = app_dirs()
    settings = _settings(args)
    pack: Pack | None = None
    pack_error: DeclarationError | None = None
    try:
        pack = load_pack(settings.pack, getattr(args, "profiles", None))
    except DeclarationError as error:
        pack_error = error
    names = pack.names if pack is not None else ()
    control = ControlFile(dirs.control_file, modes=(lambda: names) if pack is not None else None)

    if args.value is not None:
        if pack is None and args.value not in (AUTO, OFF):
            print(f"modes-tui: {pack_error}", file=sys.stderr)
            print(
                "modes-tui: cannot check the mode name against a broken pack; fix the pack, "
                "or use `modes-tui mode auto` or `modes-tui mode off`",
                file=sys.stderr,
            )
            return EXIT_FAILURE
        try:
            control.write(args.value)
        except UnknownMode as error:
            print(
                f"modes-tui: unknown mode {error.name!r} in pack "
                f"{pack.name if pack else settings.pack}; "
                f"choose one of: {', '.join(error.available)}",
                file=sys.stderr,
            )
            return EXIT_FAILURE
        print(f"mode: {args.value} (written to {control.path})")
        print(f"  {_setting_meaning(args.value)}")
        return EXIT_OK

    reading = control.read()
    exists = control.path.exists()
    classifier = settings.router_classifier or (pack.router.classifier if pack else None)
    if args.json:
        data: dict[str, Any] = {
            "mode": reading.mode,
            "source": "control file" if exists else "default",
            "path": str(control.path),
            "warning": reading.warning,
            "pack": pack.name if pack is not None else settings.pack,
            "router": None,
        }
        if pack is not None:
            data["router"] = {
                "classifier": classifier,
                "fallback": pack.router.fallback,
                "below_confidence": pack.router.below_confidence,
                "sticky": pack.router.sticky,
            }
            data["modes"] = list(pack.names)
        print(json.dumps(data, indent=2))
        return EXIT_OK
    where = f"from {control.path}" if exists else f"default: no control file at {control.path}"
    print(f"mode: {reading.mode} ({where})")
    print(f"  {_setting_meaning(reading.mode)}")
    if reading.warning:
        print(f"warning: {reading.warning}")
    if pack is None:
        print(f"pack: {settings.pack} cannot be loaded:\n{pack_error}")
        return EXIT_OK
    router = pack.router
    source = ""
    if settings.router_classifier and settings.router_classifier != router.classifier:
        source = (
            f" (set by {settings.origin('router_classifier')}; the pack says {router.classifier})"
        )
    threshold = "off" if router.below_confidence is None else f"{router.below_confidence}"
    print(f"pack: {pack.name} ({pack.path})")
    print(
        f"routing: classifier {classifier}{source}, fallback {router.fallback}, "
        f"below_confidence {threshold}, sticky {router.sticky}"
    )
    print(f"modes: {', '.join(pack.names)}")
    return EXIT_OK


def cmd_corrections(args: argparse.Namespace) -> int:
    """The corrections of a pack: list, remove ID, clear, export (`corrections_cli`)."""
    from modes_tui.core.paths import app_dirs
    from modes_tui.corrections_cli import run
    from modes_tui.store.corrections import CorrectionStore

    pack = _settings(args).pack
    return run(args, CorrectionStore.for_pack(app_dirs().data, pack), pack)


def cmd_sessions(args: argparse.Namespace) -> int:
    """List recorded sessions, newest first."""
    from modes_tui.core.paths import app_dirs
    from modes_tui.session_cli import session_action
    from modes_tui.store.export import sessions_table
    from modes_tui.store.sessions import list_sessions

    dirs = app_dirs()
    handled = session_action(args, dirs)
    if handled is not None:
        return handled
    summaries = list_sessions(dirs)
    if getattr(args, "cost", False):
        from modes_tui.cli_models import cost_rows, sessions_cost_table

        rows = cost_rows(summaries)
        if args.json:
            print(json.dumps(rows, indent=2, ensure_ascii=False))
        elif not rows:
            print(f"no sessions yet in {dirs.sessions}")
        else:
            print(sessions_cost_table(rows))
        return EXIT_OK
    if args.json:
        _print_json([s.to_dict() for s in summaries])
    elif not summaries:
        print(f"no sessions yet in {dirs.sessions}")
    else:
        _print(sessions_table(summaries))
    return EXIT_OK


def cmd_models(args: argparse.Namespace) -> int:
    """List the configured model aliases with their litellm ids, capabilities and prices."""
    from modes_tui.cli_models import cmd_models as show
    from modes_tui.llm.litellm_model import LiteLLMChatModel

    settings = _settings(args)
    catalog = settings.catalog()
    if (why := catalog.unknown(catalog.default_model)) is not None:
        raise ModesError(f"default_model: {why}")
    # offline: capability and price questions only read litellm's bundled model map
    return show(args, catalog, LiteLLMChatModel(offline=True, models=catalog))


def cmd_export(args: argparse.Namespace) -> int:
    """Write a session as a Markdown transcript or as its JSON records."""
    from pathlib import Path

    from modes_tui.store.export import session_markdown
    from modes_tui.store.replay import replay
    from modes_tui.store.session_reader import load_session

    session = load_session(args.id)
    if args.format == "json":
        _warn(session.problems)
        data = {
            "id": session.id,
            "path": str(session.path),
            "meta": dict(session.meta),
            "records": list(session.records),
            "problems": [str(problem) for problem in session.problems],
        }
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    else:
        replayed = replay(session)
        _warn(replayed.problems)
        text = session_markdown(replayed)
    if args.output is None:
        # a terminal gets the transcript inert; a pipe or a file gets it exactly
        sys.stdout.write(_terminal_safe(text) if sys.stdout.isatty() else text)
        return EXIT_OK
    target = Path(args.output).expanduser()
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as error:
        raise ModesError(
            f"cannot write {target}: {error.strerror or error}; pick another file with -o"
        ) from error
    print(f"exported session {session.id} to {target}")
    return EXIT_OK


def cmd_replay(args: argparse.Namespace) -> int:
    """Show a recorded session; with --reroute, compare today's router with the recording."""
    from modes_tui.core.classifiers import build_classifier
    from modes_tui.core.profiles import available_packs
    from modes_tui.core.routing import Router
    from modes_tui.store.export import replay_json, reroute_text, session_markdown
    from modes_tui.store.replay import replay
    from modes_tui.store.reroute import reroute
    from modes_tui.store.session_reader import load_session

    session = load_session(args.id)
    replayed = replay(session)
    _warn(replayed.problems)
    if not args.reroute:
        if args.json:
            _print_json(replay_json(replayed))
        else:
            _print(session_markdown(replayed), end="")
        return EXIT_OK

    settings = _settings(args)
    chosen = getattr(args, "pack", None) or getattr(args, "profiles", None)
    if chosen is None and session.pack is not None and session.pack in available_packs():
        pack = load_pack(session.pack)  # today's version of the pack it was recorded with
    else:
        if chosen is None and session.pack is not None:
            print(
                f"modes-tui: warning: session {session.id} was recorded with pack "
                f"{session.pack!r}, which is not installed; rerouting with {settings.pack!r}",
                file=sys.stderr,
            )
        pack = load_pack(settings.pack, getattr(args, "profiles", None))
    name = settings.router_classifier or pack.router.classifier
    router = Router(
        pack,
        build_classifier(
            pack, name, classifier_services(settings.default_model, settings.catalog())
        ),
    )
    report = asyncio.run(reroute(replayed, router))
    if args.json:
        _print_json(report.to_dict())
    else:
        _print(reroute_text(report, session.pack, name))
    return EXIT_OK


# --------------------------------------------------------------------------- chat


def _model_for(args: argparse.Namespace) -> ChatModel | None:
    """A scripted model for `--model scripted/...` (offline demos and tests), else None."""
    from modes_tui.llm.fake import SCRIPTED_PREFIX, ScriptedModel, echo_responder, slow_responder

    model_id = getattr(args, "model", None)
    if model_id and model_id.startswith(SCRIPTED_PREFIX):
        slow = model_id == f"{SCRIPTED_PREFIX}slow"
        return ScriptedModel(responder=slow_responder if slow else echo_responder)
    return None


def cmd_chat(args: argparse.Namespace) -> int:
    """Chat: the TUI, or with --plain the prompt-toolkit REPL (and pipes)."""
    if not args.plain:
        return cmd_tui(args)
    from modes_tui.core.paths import app_dirs
    from modes_tui.plain import (
        PipeConfirmer,
        Printer,
        PromptConfirmer,
        ReplContext,
        piped_lines,
        run_interactive,
        run_lines,
    )
    from modes_tui.plain_sessions import show_resumed
    from modes_tui.session_cli import current_session, pack_for, resume_for
    from modes_tui.store.control import ControlFile
    from modes_tui.store.runtime import runtime_state, sweep

    settings = _settings(args)
    dirs = app_dirs()
    resumed = resume_for(args, dirs)
    pack_name, pack_note = pack_for(args, settings, resumed)
    if pack_note:
        print(f"modes-tui: {pack_note}", file=sys.stderr)
    pack = load_pack(pack_name, getattr(args, "profiles", None), settings)
    sweep(dirs, settings.sweep_days)
    servers = mcp_servers(settings, dirs)
    control = ControlFile(dirs.control_file, modes=lambda: pack.names)
    interactive = sys.stdin.isatty() and sys.stdout.isatty() and not args.json
    confirm: Confirmer = PromptConfirmer() if interactive else PipeConfirmer()
    model_id = args.model or settings.default_model
    session = current_session(
        dirs, pack=pack.name, model=model_id, fsync=settings.sessions_fsync, version=__version__
    )
    try:
        engine = build_engine(
            pack=pack,
            model_id=settings.default_model,
            model_override=args.model,
            classifier=settings.router_classifier,
            session=session,
            control=control,
            confirm=confirm,
            dirs=dirs,
            local_model_path=settings.local_model_path,
            model=_model_for(args),
            models=settings.catalog(),
            budget=settings.budget,
            servers=servers,
        )
        if resumed is not None:
            session.attach(resumed)
            resumed.restore_into(engine)

        from modes_tui.llm.litellm_import import preload
        from modes_tui.llm.litellm_model import LiteLLMChatModel

        # warm litellm while the user types, so the first answer does not wait for its import
        preload(offline=isinstance(engine.model, LiteLLMChatModel) and engine.model.offline)

        def set_mode(value: str) -> str:
            reading = control.write(value)
            return f"mode setting: {reading.mode} ({_setting_meaning(reading.mode)})"

        def describe_modes() -> str:
            return "\n".join(f"{p.name:<10} {p.description[:90]}" for p in pack.profiles)

        context = ReplContext(
            engine=engine,
            mode_names=lambda: pack.names,
            describe_modes=describe_modes,
            set_mode=set_mode,
            history_file=runtime_state(dirs).input_history,
            session=session,
            pack_name=pack.name,
        )
        printer = Printer(sys.stdout, json_lines=args.json, err=None if interactive else sys.stderr)
        if resumed is not None:
            show_resumed(resumed, context, printer, about_pack=pack_note is None)
        if interactive:
            return asyncio.run(_closing(run_interactive(context, printer), servers))
        return asyncio.run(
            _closing(
                run_lines(piped_lines(sys.stdin.buffer, sys.stderr), context, printer), servers
            )
        )
    finally:
        session.close()


async def _closing(work: Awaitable[int], servers: McpServers | None) -> int:
    """Run `work`, then stop the MCP servers it started, on the same event loop."""
    try:
        return await work
    finally:
        if servers is not None:
            await servers.close()


def cmd_tui(args: argparse.Namespace) -> int:
    """The Textual app. Only textual loads before the first frame: the settings, the pack
    and the stores are prepared in a worker right after it, and the engine (with litellm
    and the model) in another one after that."""
    from modes_tui.session_cli import check_resume
    from modes_tui.tui.app import build_app
    from modes_tui.tui.startup import keep_imports_out_of_gc

    check_resume(args)  # a wrong id fails here, at the terminal, not inside the app
    keep_imports_out_of_gc()
    sessions: list[CurrentSession] = []
    servers: list[McpServers] = []
    app = build_app(prepare=lambda: tui_services(args, sessions, servers))

    async def run() -> None:
        try:
            await app.run_async()
        finally:  # on the app's loop, where the servers' tasks live
            for started in servers:
                await started.close()

    try:
        asyncio.run(run())
    finally:
        for session in sessions:
            session.close()
    return EXIT_OK


def tui_services(
    args: argparse.Namespace,
    sessions: list[CurrentSession],
    servers: list[McpServers] | None = None,
) -> AppServices:
    """Everything the terminal UI needs, from the settings and the options."""
    from modes_tui.core.classifiers import build_classifier
    from modes_tui.core.paths import app_dirs
    from modes_tui.core.routing import Router
    from modes_tui.llm.litellm_import import preload
    from modes_tui.llm.litellm_model import is_remote
    from modes_tui.session_cli import current_session, pack_for, resume_for
    from modes_tui.store.control import ControlFile
    from modes_tui.store.runtime import sweep
    from modes_tui.store.settings import load_settings, save_setting
    from modes_tui.tui.services import AppServices
    from modes_tui.tui.sessions import StoreSessions
    from modes_tui.tui.startup import LoadProgress

    dirs = app_dirs()
    overrides = {"pack": getattr(args, "pack", None)}
    settings = load_settings(dirs, overrides=overrides)
    resumed = resume_for(args, dirs)
    pack_name, pack_note = pack_for(args, settings, resumed)
    pack = load_pack(pack_name, getattr(args, "profiles", None), settings)
    sweep(dirs, settings.sweep_days)
    tool_servers = mcp_servers(settings, dirs)
    if tool_servers is not None and servers is not None:
        servers.append(tool_servers)
    control = ControlFile(dirs.control_file, modes=lambda: pack.names)
    override = getattr(args, "model", None)
    model_id = override or settings.default_model
    classifier = getattr(args, "classifier", None) or settings.router_classifier
    session = current_session(
        dirs, pack=pack.name, model=model_id, fsync=settings.sessions_fsync, version=__version__
    )
    sessions.append(session)
    if resumed is not None:
        session.attach(resumed)
    used = {model_id} | {p.model for p in pack.profiles if p.model != "default" and not override}
    offline = not any(is_remote(settings.catalog().resolve(name).model) for name in used)
    scripted = _model_for(args)

    progress = LoadProgress()

    def engine(confirm: Confirmer) -> Engine:
        progress.report("building the router", 0.02)
        built = build_engine(
            pack=pack,
            model_id=settings.default_model,
            model_override=override,
            classifier=classifier,
            session=session,
            control=control,
            confirm=confirm,
            dirs=dirs,
            offline=offline,
            local_model_path=settings.local_model_path,
            model=scripted,
            models=settings.catalog(),
            budget=settings.budget,
            servers=tool_servers,
        )
        if resumed is not None:
            resumed.restore_into(built)
        # Asking a capability imports litellm and, for the embedded model, registers it;
        # then the model is assembled and loaded here, with a bar, not at the first message.
        progress.report("importing litellm", 0.1)
        built.model.capabilities(model_id)
        if scripted is None and model_id.startswith("local/"):
            from modes_tui.llm.local import warm_up

            warm_up(progress.stage(0.3, 1.0))
        return built

    def router() -> Router:
        services = classifier_services(settings.default_model, settings.catalog())
        return Router(pack, build_classifier(pack, classifier, services))

    return AppServices(
        pack=pack,
        model=model_id,
        control=control,
        build_engine=engine,
        sessions=StoreSessions(dirs, router),
        preload=None if scripted is not None else lambda: preload(offline=offline),
        keymap=dict(settings.keymap),
        theme=settings.theme,
        save_theme=lambda name: save_setting(dirs, "theme", name),
        load_progress=progress,
        session_id=lambda: session.id,
        current=session,
        resumed=resumed,
        tune_gc=True,
        warnings=[*settings.warnings, *([pack_note] if pack_note else [])],
    )


# --------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    """Every verb and option."""
    parser = argparse.ArgumentParser(
        prog="modes-tui",
        description="A terminal chat assistant that routes every turn to a mode.",
    )
    parser.add_argument("--version", action="version", version=f"modes-tui {__version__}")
    parser.add_argument(
        "--home", metavar="DIR", help=f"keep config, state and data under DIR (same as ${HOME_ENV})"
    )
    parser.add_argument(
        "--pack", metavar="NAME", help="the pack of modes to use (default: default)"
    )
    parser.add_argument(
        "--model",
        metavar="ID",
        help="use this litellm model id for every mode in this run (e.g. openai/gpt-4.1-mini); "
        "scripted/echo answers offline without a model",
    )
    add_resume_option(parser)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB")

    def pack_options(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--profiles", metavar="DIR", help="use the pack in this folder")
        sub.add_argument(
            "--pack", metavar="NAME", default=argparse.SUPPRESS, help="the pack to use"
        )

    profiles = verbs.add_parser("profiles", help="list the modes of a pack, or --check it")
    pack_options(profiles)
    profiles.add_argument(
        "--check", action="store_true", help="validate; exit 1 and list every problem"
    )
    profiles.add_argument("--json", action="store_true", help="print the pack as JSON")
    profiles.set_defaults(handler=cmd_profiles)

    tools = verbs.add_parser(
        "tools", help="list the tools each mode gets (built-in, pack:<pack> or mcp:<server>)"
    )
    pack_options(tools)
    tools.add_argument("--mode", metavar="NAME", help="only this mode")
    tools.add_argument("--json", action="store_true", help="print the listing as JSON")
    tools.set_defaults(handler=cmd_tools)

    route = verbs.add_parser("route", help="show which mode would take a message (no answer)")
    route.add_argument("text", nargs="+", help="the message; - reads it from stdin")
    pack_options(route)
    route.add_argument("--classifier", metavar="NAME", help="override the pack's classifier")
    route.add_argument("--json", action="store_true", help="print Route.to_dict() as JSON")
    route.set_defaults(handler=cmd_route)

    evaluate = verbs.add_parser(
        "eval", help="route an eval file (JSONL) and report accuracy, per-mode scores, latency"
    )
    evaluate.add_argument(
        "file", metavar="FILE.jsonl", help='lines of {"text", "mode" (or null), "history"}'
    )
    pack_options(evaluate)
    evaluate.add_argument("--classifier", metavar="NAME", help="override the pack's classifier")
    evaluate.add_argument("--json", action="store_true", help="print the report as JSON")
    evaluate.add_argument(
        "--fit",
        action="store_true",
        help="also search the below_confidence that best balances accuracy and fallback recall",
    )
    evaluate.add_argument(
        "--learn",
        action="store_true",
        help="correct every wrong route as it happens (into the pack's corrections store) "
        "and print the learning curve",
    )
    evaluate.add_argument(
        "--block", type=int, default=25, metavar="N", help="lines per row of the learning curve"
    )
    evaluate.set_defaults(handler=cmd_eval)

    mode = verbs.add_parser(
        "mode", help="show the mode setting and routing rule, or set it: NAME, auto or off"
    )
    mode.add_argument(
        "value", nargs="?", metavar="NAME|auto|off", help="force a mode, auto, or off"
    )
    pack_options(mode)
    mode.add_argument("--json", action="store_true", help="print the setting as JSON")
    mode.set_defaults(handler=cmd_mode)

    from modes_tui.corrections_cli import add_parser as add_corrections

    add_corrections(verbs).set_defaults(handler=cmd_corrections)

    sessions = verbs.add_parser(
        "sessions", help="list, search, rename or delete recorded sessions (newest first)"
    )
    sessions.add_argument("--json", action="store_true", help="print the list as JSON")
    sessions.add_argument(
        "--cost",
        action="store_true",
        help="what each session cost and saved against always using the priciest mode's model",
    )
    add_session_verbs(sessions)
    sessions.set_defaults(handler=cmd_sessions)

    models = verbs.add_parser(
        "models", help="list configured model aliases: litellm id, capabilities, price"
    )
    models.add_argument("--json", action="store_true", help="print the list as JSON")
    models.set_defaults(handler=cmd_models)

    session_id = "a session id, a unique id prefix, latest, or a path to a .jsonl file"
    export = verbs.add_parser("export", help="write a session as Markdown or JSON")
    export.add_argument("id", metavar="ID", help=session_id)
    export.add_argument(
        "--format", choices=("markdown", "json"), default="markdown", help="default: markdown"
    )
    export.add_argument("-o", "--output", metavar="FILE", help="write to FILE, not stdout")
    export.set_defaults(handler=cmd_export)

    replay = verbs.add_parser(
        "replay", help="show a recorded session; --reroute compares today's router with it"
    )
    replay.add_argument("id", metavar="ID", help=session_id)
    replay.add_argument(
        "--reroute", action="store_true", help="run today's router over the recorded user turns"
    )
    pack_options(replay)
    replay.add_argument("--classifier", metavar="NAME", help="override the pack's classifier")
    replay.add_argument("--json", action="store_true", help="print events or the report as JSON")
    replay.set_defaults(handler=cmd_replay)

    chat = verbs.add_parser("chat", help="chat: the terminal UI, or --plain for a simple REPL")
    chat.add_argument(
        "--plain",
        action="store_true",
        help="a prompt-toolkit REPL; reads one message per line when stdin is not a terminal",
    )
    chat.add_argument(
        "--json", action="store_true", help="with --plain: print one JSON event per line"
    )
    pack_options(chat)
    chat.add_argument("--classifier", metavar="NAME", help="override the pack's classifier")
    chat.add_argument(
        "--model", metavar="ID", default=argparse.SUPPRESS, help="override every mode's model"
    )
    add_resume_option(chat, default=argparse.SUPPRESS)
    chat.set_defaults(handler=cmd_chat)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    if args.home:
        os.environ[HOME_ENV] = args.home
    handler = getattr(args, "handler", None)
    if handler is None:
        handler = cmd_tui  # `modes-tui` alone opens the terminal UI
    try:
        return int(handler(args))
    except ModesError as error:
        print(_terminal_safe(f"modes-tui: {error}"), file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("modes-tui: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader (e.g. `head`) went away: stop quietly, as other CLI tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILURE
