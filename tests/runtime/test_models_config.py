"""Configured models: `models:` in config.yaml, the resolver, the adapter, `modes-tui models`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from modes_tui.cli import main
from modes_tui.core.config.models import (
    EMBEDDED_MODEL,
    ModelCatalog,
    ModelConfig,
    ModelPrice,
    parse_models,
    resolve_model,
)
from modes_tui.core.errors import ProviderError, SettingsError
from modes_tui.core.model.wire import ModelRequest
from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.llm.litellm_model import LiteLLMChatModel
from modes_tui.runtime import build_engine
from modes_tui.store.settings import load_settings
from tests.support.engine_support import engine_config
from tests.support.fake_provider import FakeProvider, Reply


def write_config(data: dict[str, Any]) -> Path:
    path = app_dirs().settings_file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data), "utf-8")
    return path


# --------------------------------------------------------------------------- bad entries

BAD_ENTRIES: list[tuple[Any, str]] = [
    ("not a mapping", "models must be a mapping of alias to settings"),
    ({"fast": {"api_base": "http://x"}}, "models.fast.model is required"),
    ({"fast": {"model": ""}}, "models.fast.model is required"),
    ({"fast": 3}, "models.fast must be a mapping with at least `model:`"),
    ({"a/b": {"model": "openai/x"}}, "models.a/b: the alias must be a word"),
    ({"default": {"model": "openai/x"}}, "models.default: `default` is reserved"),
    ({"fast": {"model": "openai/x", "api_key": "sk-1"}}, "models.fast: unknown key 'api_key'"),
    (
        {"fast": {"model": "openai/x", "api_key_env": "sk-abc123 secret"}},
        "models.fast.api_key_env must be the NAME of an environment variable",
    ),
    (
        {"fast": {"model": "openai/x", "api_base": "localhost:8080"}},
        "models.fast.api_base must be an http(s) URL",
    ),
    ({"fast": {"model": "openai/x", "headers": ["X-A"]}}, "models.fast.headers must be a mapping"),
    (
        {"fast": {"model": "openai/x", "params": {"api_key": "k"}}},
        "models.fast.params.api_key is not allowed here; use `api_key_env:`",
    ),
    (
        {"fast": {"model": "openai/x", "params": {"stream": False}}},
        "models.fast.params.stream is not allowed",
    ),
    ({"fast": {"model": "openai/x", "params": [1]}}, "models.fast.params must be a mapping"),
    ({"fast": {"model": "openai/x", "tools": "yes"}}, "models.fast.tools must be true or false"),
    (
        {"fast": {"model": "openai/x", "reasoning": 1}},
        "models.fast.reasoning must be true or false",
    ),
    (
        {"fast": {"model": "openai/x", "context_window": 0}},
        "models.fast.context_window must be a whole number",
    ),
    (
        {"fast": {"model": "openai/x", "input_cost_per_token": -1, "output_cost_per_token": 0}},
        "models.fast.input_cost_per_token must be a price",
    ),
    (
        {"fast": {"model": "openai/x", "input_cost_per_token": 0.1}},
        "models.fast: set output_cost_per_token too",
    ),
]


@pytest.mark.parametrize(("models", "message"), BAD_ENTRIES)
def test_a_bad_models_entry_names_the_file_and_the_key(models: Any, message: str) -> None:
    path = write_config({"models": models})
    with pytest.raises(SettingsError) as caught:
        load_settings(app_dirs(), env={})
    text = str(caught.value)
    assert text.startswith(f"{path}: "), text
    assert message in text, text


def test_a_bad_models_variable_names_the_variable() -> None:
    with pytest.raises(SettingsError, match=r"^MODES_TUI_MODELS: models is not valid JSON"):
        load_settings(app_dirs(), env={"MODES_TUI_MODELS": "{fast:"})
    with pytest.raises(SettingsError, match=r"^MODES_TUI_MODELS: models.fast.model is required"):
        load_settings(app_dirs(), env={"MODES_TUI_MODELS": '{"fast": {}}'})


@pytest.mark.parametrize("budget", [0, -1, "lots", True])
def test_a_bad_budget_is_a_settings_error(budget: Any) -> None:
    path = write_config({"budget": budget})
    with pytest.raises(
        SettingsError, match=rf"^{path}: budget must be a price in USD greater than 0"
    ):
        load_settings(app_dirs(), env={})


def test_a_good_entry_is_read_whole() -> None:
    write_config(
        {
            "default_model": "box",
            "budget": 2.5,
            "models": {
                "fast": "openai/gpt-4.1-mini",
                "box": {
                    "model": "openai/gemma",
                    "api_base": "http://127.0.0.1:8080/v1",
                    "api_key_env": "BOX_KEY",
                    "headers": {"X-Team": "research", "X-Num": 7},
                    "params": {"top_p": 0.9},
                    "tools": False,
                    "reasoning": False,
                    "context_window": 4096,
                    "input_cost_per_token": 0,
                    "output_cost_per_token": 0.000002,
                },
            },
        }
    )
    settings = load_settings(app_dirs(), env={})
    assert settings.budget == 2.5
    box = settings.models["box"]
    assert box == ModelConfig(
        model="openai/gemma",
        alias="box",
        api_base="http://127.0.0.1:8080/v1",
        api_key_env="BOX_KEY",
        headers={"X-Team": "research", "X-Num": "7"},
        params={"top_p": 0.9},
        tools=False,
        reasoning=False,
        context_window=4096,
        price=ModelPrice(0.0, 0.000002),
        source=box.source,
    )
    assert box.source.endswith("config.yaml: models.box")
    assert settings.models["fast"].model == "openai/gpt-4.1-mini"  # the short form
    catalog = settings.catalog()
    assert catalog.resolve("default") is box
    assert catalog.resolve("box") is box
    assert catalog.resolve("anthropic/claude-x") == ModelConfig(model="anthropic/claude-x")


# --------------------------------------------------------------------------- the resolver


@pytest.mark.parametrize(
    ("name", "default", "expected"),
    [
        ("default", "default", EMBEDDED_MODEL),
        ("default", "openai/gpt-4.1", "openai/gpt-4.1"),
        ("openai/gpt-4.1", "default", "openai/gpt-4.1"),
        ("default", EMBEDDED_MODEL, EMBEDDED_MODEL),
    ],
)
def test_one_resolver_for_default(name: str, default: str, expected: str) -> None:
    assert resolve_model(name, default) == expected


def test_every_former_spelling_of_the_embedded_model_is_the_resolvers() -> None:
    from modes_tui.llm import router_backends
    from modes_tui.store.settings import Settings
    from modes_tui.tui import status

    assert router_backends.EMBEDDED_MODEL is EMBEDDED_MODEL
    assert status.is_demo_model(EMBEDDED_MODEL)  # the header calls it the demo model
    assert Settings().default_model is EMBEDDED_MODEL  # what a run's engine defaults to
    assert router_backends.resolve_model is resolve_model


def test_a_near_miss_of_an_alias_is_refused_but_a_bare_litellm_id_is_not() -> None:
    catalog = ModelCatalog({"claude": ModelConfig("anthropic/claude-x", alias="claude")})
    assert "did you mean 'claude'" in (catalog.unknown("cluade") or "")
    assert catalog.unknown("gpt-4o") is None  # litellm knows bare OpenAI names
    assert catalog.unknown("openai/x") is None


def test_a_profile_naming_a_mistyped_alias_fails_at_start_naming_the_file(
    write_pack: Any,
) -> None:
    folder = write_pack(
        modes={
            "chat": {"description": "Chat.", "model": "fsat"},
            "code": {"description": "Code.", "fallback_models": ["fast"]},
        }
    )
    catalog = ModelCatalog({"fast": ModelConfig("openai/gpt-4.1-mini", alias="fast")})
    with pytest.raises(SettingsError, match=r"chat\.yaml: model: 'fsat' .* did you mean 'fast'"):
        build_engine(engine_config(models=catalog), pack=load_pack(profiles_dir=folder))
    with pytest.raises(SettingsError, match=r"^--model: 'fsat'"):
        build_engine(
            engine_config(models=catalog, model_override="fsat"),
            pack=load_pack(profiles_dir=folder),
        )


# --------------------------------------------------------------------------- the adapter


def test_the_adapter_sends_the_alias_parameters_and_reads_the_key_at_call_time() -> None:
    box = parse_models(
        {
            "box": {
                "model": "openai/gemma",
                "api_base": "http://127.0.0.1:9/v1",
                "api_key_env": "BOX_KEY",
                "headers": {"X-Team": "research"},
                "params": {"top_p": 0.9, "temperature": 0.1},
            }
        },
        where="config.yaml",
    )
    adapter = LiteLLMChatModel(models=ModelCatalog(box), environ={"BOX_KEY": "sk-live"})
    request = ModelRequest("box", ({"role": "user", "content": "hi"},), temperature=0.5)
    params = adapter._params(request, stream=True)
    assert params["model"] == "openai/gemma"
    assert params["api_base"] == "http://127.0.0.1:9/v1"
    assert params["api_key"] == "sk-live"
    assert params["extra_headers"] == {"X-Team": "research"}
    assert params["top_p"] == 0.9
    assert params["temperature"] == 0.5  # the profile's own parameter wins over the alias's
    assert "sk-live" not in json.dumps(request.to_dict())  # what the session keeps


async def test_a_missing_key_variable_is_an_auth_error_naming_it() -> None:
    models = parse_models(
        {"box": {"model": "openai/gemma", "api_key_env": "BOX_KEY"}}, where="/h/config.yaml"
    )
    adapter = LiteLLMChatModel(models=ModelCatalog(models), environ={})
    request = ModelRequest("box", ({"role": "user", "content": "hi"},))
    with pytest.raises(ProviderError) as caught:
        [event async for event in adapter.stream(request)]
    error = caught.value
    assert error.kind == "auth" and error.model == "box"
    assert "BOX_KEY is not set (/h/config.yaml: models.box reads the key from it)" in str(error)
    assert "export BOX_KEY=" in error.hint


async def test_an_alias_streams_through_litellm_with_its_price_and_capabilities(
    fake_llm: FakeProvider,
) -> None:
    fake_llm.script(Reply(text=["a", "b"], usage=(100, 10)))
    models = parse_models(
        {
            "cheap": {
                "model": "fake/plain",
                "params": {"top_p": 0.5},
                "tools": False,
                "reasoning": True,
                "input_cost_per_token": 0.01,
                "output_cost_per_token": 0.1,
            }
        },
        where="config.yaml",
    )
    adapter = LiteLLMChatModel(offline=True, models=ModelCatalog(models))
    request = ModelRequest("cheap", ({"role": "user", "content": "hi"},))
    events = [event async for event in adapter.stream(request)]
    assert events[-1].cost == pytest.approx(100 * 0.01 + 10 * 0.1)  # configured, not litellm's
    assert fake_llm.seen[0].params.get("top_p") == 0.5
    # overrides win over litellm's map (fake/plain: tools yes, reasoning no)
    assert adapter.supports_tools("cheap") is False
    assert adapter.supports_reasoning("cheap") is True
    assert adapter.supports_tools("fake/plain") is True
    assert adapter.price("cheap") == ModelPrice(0.01, 0.1)
    assert adapter.price("fake/plain") == ModelPrice(1e-6, 2e-6)  # litellm's registered map
    assert adapter.price("nobody/knows") is None


# --------------------------------------------------------------------------- modes-tui models


def test_models_verb_lists_aliases_ids_capabilities_and_prices(
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_config(
        {
            "default_model": "fast",
            "models": {
                "fast": {"model": "openai/gpt-4.1-mini", "api_key_env": "OPENAI_API_KEY"},
                "box": {
                    "model": "openai/gemma",
                    "api_base": "http://127.0.0.1:8080/v1",
                    "tools": False,
                    "input_cost_per_token": 0,
                    "output_cost_per_token": 0,
                },
            },
        }
    )
    assert main(["models", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert set(rows) == {"fast", "box"}
    fast, box = rows["fast"], rows["box"]
    assert fast["model"] == "openai/gpt-4.1-mini" and fast["default"] is True
    assert fast["api_key_env"] == "OPENAI_API_KEY"
    assert fast["tools"] is True and fast["price_source"] == "litellm"
    assert fast["input_cost_per_token"] == pytest.approx(4e-7)  # litellm's bundled price list
    assert box["tools"] is False and box["price_source"] == "config.yaml"
    assert box["api_base"] == "http://127.0.0.1:8080/v1"

    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "fast *  openai/gpt-4.1-mini" in out
    assert "OPENAI_API_KEY" in out and "0.40" in out  # $/M input tokens


def test_models_verb_without_aliases_lists_the_default_and_says_how_to_add_some(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["models", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["name"] for row in rows] == [EMBEDDED_MODEL]
    assert rows[0]["default"] is True and rows[0]["tools"] is False
    assert main(["models"]) == 0
    assert "add `models:` to config.yaml" in capsys.readouterr().out


def test_models_verb_reports_a_bad_config_with_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config({"models": {"fast": {"model": "openai/x", "api_key": "sk-oops"}}})
    assert main(["models"]) == 1
    err = capsys.readouterr().err
    assert f"{path}: models.fast: unknown key 'api_key'" in err
    assert "sk-oops" not in err


def test_the_readme_models_example_is_valid_and_covers_the_usual_servers() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text("utf-8")
    section = readme.split("## Models", 1)[1]
    block = section.split("```yaml", 1)[1].split("```", 1)[0]
    data = yaml.safe_load(block)
    models = parse_models(data["models"], where="README.md")
    catalog = ModelCatalog(models, data["default_model"])
    providers = {config.model.split("/", 1)[0] for config in models.values()}
    assert {"openai", "anthropic", "ollama_chat", "lm_studio", "hosted_vllm"} <= providers
    assert catalog.resolve("default").model == "openai/gpt-4.1-mini"
    assert models["box"].api_base == "http://127.0.0.1:8080/v1"


async def test_the_routers_model_may_be_an_alias(write_pack: Any, fake_llm: FakeProvider) -> None:
    from modes_tui.core.history.conversation import Message
    from modes_tui.core.routing.classifiers import build_classifier
    from modes_tui.core.routing.router import Router
    from modes_tui.runtime import classifier_services

    folder = write_pack(
        router={"classifier": "chat", "model": "router", "fallback": "chat"},
        modes={"chat": {"description": "Chat."}, "code": {"description": "Code."}},
    )
    pack = load_pack(profiles_dir=folder)
    catalog = ModelCatalog(
        parse_models({"router": {"model": "fake/plain", "params": {"top_p": 0.3}}}, where="c")
    )
    fake_llm.script(Reply(text=json.dumps({"mode": "code", "confidence": 0.9, "reason": "r"})))
    classifier = build_classifier(pack, None, classifier_services("default", catalog))
    route = await Router(pack, classifier).route([Message("user", "my loop never ends")])
    assert route.mode_name == "code"
    assert route.classifier is not None and route.classifier.model == "router"
    (seen,) = fake_llm.seen
    assert seen.model == "plain" and seen.params.get("top_p") == 0.3
