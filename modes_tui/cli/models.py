"""`modes-tui models` and `modes-tui sessions --cost`: the configured models, and what sessions cost.

Both verbs import litellm only to ask its model map for capabilities and prices (with the
bundled price list, never the network), except `models --check`, which calls each model once
(`cli.model_check`).
"""

from __future__ import annotations

import argparse
from typing import Any

from modes_tui.cli.common import say, say_json, settings_for
from modes_tui.core.config.models import DEFAULT, ModelCatalog, ModelConfig
from modes_tui.core.errors import ModesError


def cmd_models(args: argparse.Namespace) -> int:
    """List the configured model aliases with their litellm ids, capabilities and prices;
    the roles and what each resolves to; `--check` calls each once."""
    from modes_tui.llm.litellm_model import LiteLLMChatModel

    settings = settings_for(args)
    catalog = settings.catalog()
    if (why := catalog.unknown(catalog.default_model)) is not None:
        raise ModesError(f"default_model: {why}")
    if args.check:
        from modes_tui.cli.model_check import check_models

        names = [row[0] for row in model_configs(catalog)]
        return check_models(args, catalog, names, settings.local_model_path)
    # offline: capability and price questions only read litellm's bundled model map
    return show_models(args, catalog, LiteLLMChatModel(offline=True, models=catalog))


def model_configs(catalog: ModelCatalog) -> list[tuple[str, ModelConfig]]:
    """Every alias, then what `default` and each role come to when that is no alias."""
    configs: list[tuple[str, ModelConfig]] = [(alias, c) for alias, c in catalog.entries.items()]
    for name in (DEFAULT, *catalog.role_table):
        target = catalog.choose(name).name
        if target not in catalog.entries and target not in (n for n, _ in configs):
            configs.append((target, catalog.resolve(target)))
    return configs


def roles_by_model(catalog: ModelCatalog) -> dict[str, list[str]]:
    """Model name (alias or litellm id) -> the roles that resolve to it."""
    found: dict[str, list[str]] = {}
    for role in catalog.role_table:
        found.setdefault(catalog.choose(role).name, []).append(role)
    return found


def model_rows(catalog: ModelCatalog, adapter: Any) -> list[dict[str, Any]]:
    """One row per alias, then the default model and role targets that are no alias."""
    default = catalog.choose(DEFAULT).name
    roles = roles_by_model(catalog)
    rows = []
    for name, config in model_configs(catalog):
        price = adapter.price(name)
        rows.append(
            {
                **config.summary(),
                "name": name,
                "default": name == default,
                "roles": roles.get(name, []),
                "tools": adapter.supports_tools(name),
                "reasoning": adapter.supports_reasoning(name),
                "context_window": adapter.context_window(name),
                "input_cost_per_token": None if price is None else price.input,
                "output_cost_per_token": None if price is None else price.output,
                "price_source": (
                    "config.yaml"
                    if config.price is not None
                    else ("litellm" if price is not None else None)
                ),
            }
        )
    return rows


def per_million(value: float | None) -> str:
    """USD per token as USD per million tokens, the way providers list prices."""
    if value is None:
        return "?"
    return f"{value * 1_000_000:.2f}"


def show_models(args: argparse.Namespace, catalog: ModelCatalog, adapter: Any) -> int:
    """List the configured aliases (and the default model) with capabilities and price."""
    from modes_tui.store.export import table

    rows = model_rows(catalog, adapter)
    if args.json:
        say_json(rows)
        return 0

    def flag(value: bool) -> str:
        return "yes" if value else "no"

    lines = [
        (
            row["name"] + (" *" if row["default"] else ""),
            row["model"],
            row["api_base"] or "",
            flag(row["tools"]),
            flag(row["reasoning"]),
            "?" if row["context_window"] is None else str(row["context_window"]),
            per_million(row["input_cost_per_token"]),
            per_million(row["output_cost_per_token"]),
            row["api_key_env"] or "",
        )
        for row in rows
    ]
    say(
        table(
            (
                "ALIAS",
                "LITELLM ID",
                "API BASE",
                "TOOLS",
                "REASONING",
                "CONTEXT",
                "$/M IN",
                "$/M OUT",
                "KEY FROM",
            ),
            lines,
            right=(5, 6, 7),
        )
    )
    say("* the default model (`model: default`); prices in USD per million tokens")
    say()
    say(roles_table(catalog))
    if not catalog.entries:
        say(
            "no aliases yet: run `modes-tui init`, or add `models:` to config.yaml "
            "(see the README, section Models)"
        )
    return 0


def roles_table(catalog: ModelCatalog) -> str:
    """`ROLE  RESOLVES TO  LITELLM ID`: each role, the names it goes through, and the id."""
    from modes_tui.store.export import table

    lines = []
    for role in catalog.role_table:
        choice = catalog.choose(role)
        shown = " -> ".join(choice.path[1:])
        lines.append((role, shown, catalog.resolve(role).model))
    return table(("ROLE", "RESOLVES TO", "LITELLM ID"), lines) + (
        "\nroles: a profile's `model: fast` follows `roles:` in config.yaml"
        " (fast and strong mean `default` until set)"
    )


def cost_rows(summaries: list[Any]) -> list[dict[str, Any]]:
    """Each session's cost totals (reads each log whole: only for `sessions --cost`)."""
    from modes_tui.core.history.ledger import session_costs
    from modes_tui.store.session_reader import load_session

    rows = []
    for summary in summaries:
        try:
            records = load_session(summary.path).records
        except Exception as error:  # noqa: BLE001 - one unreadable log must not hide the others
            rows.append({**summary.to_dict(), "cost": None, "problem": str(error)})
            continue
        rows.append({**summary.to_dict(), **session_costs(records)})
    return rows


def sessions_cost_table(rows: list[dict[str, Any]]) -> str:
    """ID, created, turns, cost, saved vs always X; a total line."""
    from modes_tui.core.history.ledger import money
    from modes_tui.store.export import table

    body = []
    total = 0.0
    saved_total = 0.0
    for row in rows:
        cost = row.get("cost")
        saved = row.get("saved")
        if isinstance(cost, float | int):
            total += cost
        if isinstance(saved, float | int):
            saved_total += saved
        unknown = row.get("unknown_turns") or 0
        body.append(
            (
                row["id"],
                (row.get("created") or "")[:16].replace("T", " "),
                str(row.get("turns") or 0),
                "?" if cost is None else money(cost) + (f" +{unknown} unpriced" if unknown else ""),
                "" if saved is None else f"{money(saved)} vs always {row.get('baseline_model')}",
            )
        )
    text = table(("ID", "CREATED", "TURNS", "COST", "SAVED"), body, right=(2, 3))
    return f"{text}\ntotal {money(total)}, saved {money(saved_total)}"
