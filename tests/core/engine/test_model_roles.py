"""Model roles: `model: fast | strong` in a profile, `roles:` in config.yaml, the resolver,
what the engine, the panel, the REPL and the ledger say, and `modes-tui models [--check]`."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from modes_tui.cli import main
from modes_tui.core.config.models import (
    EMBEDDED_MODEL,
    ModelCatalog,
    check_roles,
    parse_models,
    resolve_role,
)
from modes_tui.core.engine.engine import Engine
from modes_tui.core.errors import SettingsError
from modes_tui.core.history.events import RequestBuilt, TurnEvent
from modes_tui.core.history.transcript import TurnTranscript
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.router import Router
from modes_tui.llm.litellm_model import LiteLLMChatModel
from modes_tui.store.session_log import SessionLog
from modes_tui.store.settings import load_settings
from tests.support.engine_support import with_config
from tests.support.fake_openai_server import fake_openai_server
from tests.support.fake_provider import FakeProvider, Reply

ALIASES = {
    "mini": {"model": "fake/mini", "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6},
    "mid": {"model": "fake/mid", "input_cost_per_token": 1e-5, "output_cost_per_token": 2e-5},
    "big": {"model": "fake/big", "input_cost_per_token": 1e-4, "output_cost_per_token": 2e-4},
}


PROVE = "prove that the square root of two is irrational"  # self-contained: not a follow-up


def write_config(data: dict[str, Any]) -> Path:
    path = app_dirs().settings_file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data), "utf-8")
    return path


def catalog(roles: dict[str, str], default_model: str = "mini") -> ModelCatalog:
    entries = parse_models(ALIASES, where="config.yaml")
    found = ModelCatalog(entries, default_model, roles)
    check_roles(found)
    return found


# --------------------------------------------------------------------------- resolution


def test_a_role_goes_to_an_alias_and_the_alias_to_its_litellm_id() -> None:
    models = catalog({"fast": "mini", "strong": "deep", "deep": "big", "cheap": "openai/gpt-x"})
    choice = models.choose("strong")
    assert (choice.name, choice.role, choice.path) == ("big", "strong", ("strong", "deep", "big"))
    assert models.resolve("strong").model == "fake/big"
    assert models.resolve("fast").model == "fake/mini"
    assert models.resolve("cheap").model == "openai/gpt-x"  # a litellm id, not an alias
    assert models.choose("mini").role is None  # a plain alias names no role
    assert models.choose("default").name == "mini"


def test_without_roles_fast_and_strong_mean_default_and_offline_the_embedded_model() -> None:
    offline = ModelCatalog()
    for role in ("fast", "strong"):
        assert offline.choose(role).name == EMBEDDED_MODEL
        assert offline.choose(role).role == role
        assert offline.resolve(role).model == EMBEDDED_MODEL
    configured = ModelCatalog(parse_models(ALIASES, where="c"), "big")
    assert configured.resolve("fast").model == "fake/big"  # `default` until roles are set


def test_an_alias_called_like_a_role_wins_over_the_built_in_role() -> None:
    models = ModelCatalog(parse_models({"fast": "openai/gpt-4.1-mini"}, where="c"), "x/y")
    assert models.choose("fast").name == "fast" and models.choose("fast").role is None
    assert models.resolve("fast").model == "openai/gpt-4.1-mini"
    assert models.choose("strong").name == "x/y"


def test_resolve_role_is_public_and_names_a_cycle_with_its_file() -> None:
    assert resolve_role("fast", {"fast": "a/b"}).name == "a/b"
    with pytest.raises(SettingsError, match=r"^cfg.yaml: roles: a -> b -> a is a cycle"):
        resolve_role("a", {"a": "b", "b": "a"}, where="cfg.yaml")


BAD_ROLES: list[tuple[dict[str, Any], str]] = [
    ({"roles": ["fast"]}, "roles must be a mapping of role to model"),
    ({"roles": {"fast": 3}}, "roles.fast must be an alias from `models:`, a litellm id or a role"),
    ({"roles": {"default": "mini"}}, "roles.default: `default` is the default_model setting"),
    ({"roles": {"a/b": "mini"}}, "roles.a/b: a role is a word"),
    ({"roles": {"fast": "mnii"}}, "roles.fast: 'mnii' is not an alias from `models:`"),
    ({"roles": {"mini": "big"}}, "roles.mini: 'mini' is also an alias in `models:`"),
    ({"roles": {"fast": "strong", "strong": "fast"}}, "roles: fast -> strong -> fast is a cycle"),
    ({"default_model": "strong"}, "roles: default -> strong -> default is a cycle"),
]


@pytest.mark.parametrize(("extra", "message"), BAD_ROLES)
def test_a_bad_role_is_an_error_naming_the_file_and_the_key(
    extra: dict[str, Any], message: str
) -> None:
    path = write_config({"models": ALIASES, **extra})
    with pytest.raises(SettingsError) as caught:
        load_settings(app_dirs(), env={})
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)


def test_roles_from_the_environment_and_their_errors_name_the_variable() -> None:
    write_config({"models": ALIASES})
    settings = load_settings(app_dirs(), env={"MODES_TUI_ROLES": "fast=mini,strong=big"})
    assert settings.catalog().resolve("strong").model == "fake/big"
    assert settings.origin("roles") == "MODES_TUI_ROLES"
    with pytest.raises(SettingsError, match=r"^MODES_TUI_ROLES: roles.strong: 'bgi' is not"):
        load_settings(app_dirs(), env={"MODES_TUI_ROLES": '{"strong": "bgi"}'})


def test_the_default_pack_answers_chat_and_write_fast_and_code_and_reason_strong() -> None:
    pack = load_pack("default")
    models = {profile.name: profile.model for profile in pack.profiles}
    assert models["chat"] == models["write"] == "fast"
    assert models["code"] == models["reason"] == "strong"


# --------------------------------------------------------------------------- in the engine


@pytest.fixture
def pack(write_pack: Any) -> Pack:
    return load_pack(
        profiles_dir=write_pack(
            router={"classifier": "keyword", "fallback": "chat"},
            modes={
                "chat": {"description": "Chat.", "keywords": ["hello"], "model": "fast"},
                "reason": {"description": "Hard.", "keywords": ["prove"], "model": "strong"},
                "exotic": {"description": "Rare.", "keywords": ["xyzzy"], "model": "big"},
            },
        )
    )


def engine_for(pack: Pack, models: ModelCatalog, **kwargs: Any) -> Engine:
    return Engine(
        **with_config(
            pack=pack,
            router=Router(pack, KeywordClassifier()),
            model=LiteLLMChatModel(offline=True, models=models),
            default_model=models.default_model,
            models=models,
            cwd=Path.cwd(),
            **kwargs,
        )
    )


async def run(engine: Engine, text: str) -> list[TurnEvent]:
    return [event async for event in engine.run_turn(text)]


async def test_a_mode_naming_a_role_is_answered_by_the_roles_model_and_says_so(
    pack: Pack, fake_llm: FakeProvider
) -> None:
    fake_llm.script(Reply(text="hi"), Reply(text="qed"))
    log = SessionLog.create(app_dirs(), pack=pack.name, model="mini")
    engine = engine_for(pack, catalog({"fast": "mini", "strong": "big"}), session=log)
    record = TurnTranscript(1, "hello")
    for event in await run(engine, "hello"):
        record.apply(event)
    built = [e for e in await run(engine, PROVE) if isinstance(e, RequestBuilt)]
    log.close()

    assert [seen.model for seen in fake_llm.seen] == ["mini", "big"]  # fake/<model>
    assert (record.model, record.role) == ("mini", "fast")
    assert (built[0].request.model, built[0].role) == ("big", "strong")
    from modes_tui.tui.render import route_card

    assert "answered by mini (fast role)" in route_card(record).plain  # type: ignore[union-attr]
    requests = [json.loads(line) for line in log.path.read_text().splitlines()]
    assert [r.get("role") for r in requests if r["type"] == "request"] == ["fast", "strong"]


async def test_the_repl_says_which_model_a_role_gave(pack: Pack, fake_llm: FakeProvider) -> None:
    from modes_tui.repl import Printer, ReplContext, run_lines

    fake_llm.script(Reply(text="hi"))
    engine = engine_for(pack, catalog({"fast": "mini", "strong": "big"}))
    out = io.StringIO()
    context = ReplContext(
        engine=engine,
        mode_names=lambda: pack.names,
        describe_modes=lambda: "",
        set_mode=lambda value: value,
        history_file=None,
    )
    assert await run_lines(["hello\n"], context, Printer(out, err=io.StringIO())) == 0
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("[chat · by classifier")
    assert lines[1] == "(fast role: mini)"


async def test_saved_is_measured_against_always_the_strong_role(
    pack: Pack, fake_llm: FakeProvider
) -> None:
    # `exotic` names the priciest model; with roles in use the baseline is still strong
    fake_llm.script(Reply(text="hi", usage=(1000, 100)), Reply(text="qed", usage=(1000, 100)))
    engine = engine_for(pack, catalog({"fast": "mini", "strong": "mid"}))
    await run(engine, "hello")
    ledger = engine.costs.ledger
    assert (ledger.baseline_model, ledger.baseline_role) == ("mid", "strong")
    assert ledger.turns[0].cost == pytest.approx(1000 * 1e-6 + 100 * 2e-6)
    assert ledger.turns[0].baseline_cost == pytest.approx(1000 * 1e-5 + 100 * 2e-5)
    await run(engine, PROVE)
    assert ledger.saved == pytest.approx(0.012 - 0.0012)
    assert ledger.header() == "$0.0132 · saved $0.0108 vs always strong (mid)"


async def test_with_model_pinned_no_role_applies(pack: Pack, fake_llm: FakeProvider) -> None:
    fake_llm.script(Reply(text="hi"))
    engine = engine_for(pack, catalog({"fast": "mini", "strong": "big"}), model_override="mid")
    built = [e for e in await run(engine, "hello") if isinstance(e, RequestBuilt)]
    assert (built[0].request.model, built[0].role) == ("mid", None)
    assert engine.costs.ledger.baseline_role is None


# --------------------------------------------------------------------------- modes-tui models


def test_models_lists_each_role_and_what_it_resolves_to(
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_config(
        {
            "default_model": "mini",
            "models": ALIASES,
            "roles": {"strong": "deep", "deep": "big", "cheap": "openai/gpt-4.1-nano"},
        }
    )
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"\nfast +default -> mini +fake/mini\n", out)
    assert re.search(r"\nstrong +deep -> big +fake/big\n", out)
    assert re.search(r"\ncheap +openai/gpt-4.1-nano +openai/gpt-4.1-nano\n", out)
    assert main(["models", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["mini"]["roles"] == ["fast"] and rows["mini"]["default"] is True
    assert rows["big"]["roles"] == ["strong", "deep"]
    # a role's litellm id that is no alias still gets its row
    assert rows["openai/gpt-4.1-nano"]["roles"] == ["cheap"]
    assert rows["openai/gpt-4.1-nano"]["input_cost_per_token"] == pytest.approx(1e-7)


def test_models_check_calls_each_model_once_and_reports_each_failure(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MISSING_KEY_FOR_TEST", raising=False)
    monkeypatch.setenv("FAKE_SERVER_KEY", "sk-test")
    with fake_openai_server() as base:
        server = {"api_base": base, "api_key_env": "FAKE_SERVER_KEY"}
        write_config(
            {
                "default_model": "good",
                "models": {
                    "good": {"model": "openai/ok", **server},
                    "broken": {"model": "openai/http-500", **server},
                    "nokey": {
                        **server,
                        "model": "openai/ok",
                        "api_key_env": "MISSING_KEY_FOR_TEST",
                    },
                },
                "roles": {"strong": "broken"},
            }
        )
        assert main(["models", "--check", "--timeout", "10"]) == 1
        out = capsys.readouterr().out
        assert main(["models", "--check", "--json", "--timeout", "10"]) == 1
        rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}

    assert "good" in out and "ok: 'Hello from the fake" in out
    assert "FAILED (server_error): the fake server broke on purpose" in out
    assert "FAILED (auth): MISSING_KEY_FOR_TEST is not set" in out
    assert "1 of 3 answered" in out
    assert set(rows) == {"good", "broken", "nokey"}  # one line per model, none lost
    assert rows["good"]["ok"] is True and rows["broken"]["ok"] is False
    assert rows["broken"]["kind"] == "server_error"


def test_models_check_exits_0_when_every_model_answers(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_SERVER_KEY", "sk-test")
    with fake_openai_server() as base:
        good = {"model": "openai/ok", "api_base": base, "api_key_env": "FAKE_SERVER_KEY"}
        write_config({"default_model": "good", "models": {"good": good}})
        assert main(["models", "--check"]) == 0
    assert "1 of 1 answered" in capsys.readouterr().out


def test_the_readme_roles_example_is_valid() -> None:
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text("utf-8")
    block = readme.split("## Models", 1)[1].split("```yaml", 1)[1].split("```", 1)[0]
    data = yaml.safe_load(block)
    models = ModelCatalog(
        parse_models(data["models"], where="README.md"), data["default_model"], data["roles"]
    )
    check_roles(models)
    assert models.resolve("fast").model == "openai/gpt-4.1-mini"
    assert models.resolve("strong").model == "anthropic/claude-sonnet-4-5"


async def test_the_routers_model_may_be_a_role(write_pack: Any, fake_llm: FakeProvider) -> None:
    from modes_tui.core.history.conversation import Message
    from modes_tui.core.routing.classifiers import build_classifier
    from modes_tui.runtime import classifier_services

    folder = write_pack(
        router={"classifier": "chat", "model": "fast", "fallback": "chat"},
        modes={"chat": {"description": "Chat."}, "code": {"description": "Code."}},
    )
    routed = load_pack(profiles_dir=folder)
    models = catalog({"fast": "mini", "strong": "big"}, default_model="big")
    fake_llm.script(Reply(text=json.dumps({"mode": "code", "confidence": 0.9, "reason": "r"})))
    classifier = build_classifier(routed, None, classifier_services("big", models))
    route = await Router(routed, classifier).route([Message("user", "my loop never ends")])
    assert route.mode_name == "code"
    assert [seen.model for seen in fake_llm.seen] == ["mini"]  # the role, not the default
