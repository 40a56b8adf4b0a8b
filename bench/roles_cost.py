"""What model roles save: a replayed session, routed, against always the `strong` role.

    python bench/roles_cost.py [--evals bench/evals/conversation.jsonl,bench/evals/default.jsonl]
                               [--answer-chars 1600]

Every line of each eval file is one turn of the `default` pack, replayed through the real
engine and the real router (the pack's embedding classifier, with the line's history in the
conversation, so follow-ups stay where they were). The default pack answers chat and write
with `fast`, code and reason with `strong`, shell with `default` (the default model, which
`init` sets to the fast model). For each pair of a provider's small and large model, the
roles are `fast: <small>, strong: <large>`, and the engine's own cost ledger prices every
turn and its baseline (the strong role: "saved vs always strong").

Prices are litellm's bundled model map (LITELLM_LOCAL_MODEL_COST_MAP=True; no network).
Token counts: the scripted model answers every turn with `--answer-chars` characters and
counts characters / 4 as tokens for the request it was really given (system prompt, mode
instructions, history window, message) and for the answer, the same estimate for both
sides of the comparison. The table prints the cost of always-strong and of routed, and
the saving in per cent; it never asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ["MODES_TUI_HOME"] = tempfile.mkdtemp(prefix="roles-cost-")

from modes_tui.core.config.models import EMBEDDED_MODEL, ModelCatalog, ModelPrice  # noqa: E402
from modes_tui.core.engine.config import EngineConfig  # noqa: E402
from modes_tui.core.engine.engine import Engine  # noqa: E402
from modes_tui.core.evals.cases import EvalCase, read_eval_file  # noqa: E402
from modes_tui.core.history.conversation import Message  # noqa: E402
from modes_tui.core.history.events import RequestBuilt  # noqa: E402
from modes_tui.core.model.ports import ModelCapabilities  # noqa: E402
from modes_tui.core.model.wire import ModelRequest, UsageReport  # noqa: E402
from modes_tui.core.packs.profiles import Pack, load_pack  # noqa: E402
from modes_tui.core.routing.router import Router  # noqa: E402
from modes_tui.llm.fake import ScriptedModel, ScriptedReply  # noqa: E402
from modes_tui.llm.litellm_model import LiteLLMChatModel  # noqa: E402
from modes_tui.runtime import build_engine  # noqa: E402
from modes_tui.store.export import table  # noqa: E402

PAIRS: tuple[tuple[str, str, str], ...] = (
    ("OpenAI", "openai/gpt-4.1-mini", "openai/gpt-4.1"),
    ("Anthropic", "anthropic/claude-haiku-4-5", "anthropic/claude-sonnet-4-5"),
    ("Gemini", "gemini/gemini-2.5-flash", "gemini/gemini-2.5-pro"),
)
"""A provider's small and large model: what `modes-tui init` proposes for fast and strong."""


class PricedModel:
    """The scripted model, with each call priced as litellm prices it (tokens x price)."""

    def __init__(self, answer: str, prices: dict[str, ModelPrice]) -> None:
        capable = {m: ModelCapabilities(tools=True, price=p) for m, p in prices.items()}
        self.inner = ScriptedModel(responder=lambda _r: ScriptedReply(answer), capable_of=capable)
        self.prices = prices

    def capabilities(self, model: str) -> ModelCapabilities:
        return self.inner.capabilities(model)

    async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
        async for event in self.inner.stream(request):
            if isinstance(event, UsageReport):
                price = self.prices[request.model]
                cost = price.cost(event.prompt_tokens, event.completion_tokens)
                event = UsageReport(event.prompt_tokens, event.completion_tokens, cost)
            yield event


class SaysYes:
    """The user: yes to entering shell mode (`auto_enter: confirm`); no tool runs here."""

    async def confirm(self, call: Any, tool: Any) -> bool:
        return False

    async def ask(self, question: Any) -> bool:
        return True


@dataclass
class Tally:
    """One eval set under one pair of models."""

    turns: int = 0
    routed: float = 0.0
    always_strong: float = 0.0
    roles: Counter[str] | None = None


def real_router(pack: Pack) -> Router:
    """The pack's own router (its embedding classifier), built as the app builds it."""
    engine = build_engine(
        EngineConfig(default_model=EMBEDDED_MODEL, cwd=Path.cwd()), pack=pack, model=ScriptedModel()
    )
    return engine.router


def history_messages(case: EvalCase) -> list[Message]:
    """The line's history as the conversation holds it (the previous mode on the last
    assistant message, so the router knows what a follow-up follows)."""
    found: list[Message] = []
    for entry in case.history:
        if isinstance(entry, str):
            found.append(Message("user", entry))
            continue
        role = str(entry.get("role"))
        mode = entry.get("mode")
        found.append(Message(role, str(entry.get("content") or ""), mode=mode))  # type: ignore[arg-type]
    for index in range(len(found) - 1, -1, -1):
        if found[index].role == "assistant":
            if found[index].mode is None and case.previous_mode is not None:
                found[index] = Message("assistant", found[index].content, mode=case.previous_mode)
            break
    return found


async def replay(
    pack: Pack, router: Router, cases: list[EvalCase], pair: tuple[str, str, str], answer: str
) -> Tally:
    """Every case as one turn through the engine; the ledger's totals."""
    _name, fast, strong = pair
    adapter = LiteLLMChatModel(offline=True)
    prices = {model: adapter.price(model) for model in (fast, strong)}
    missing = [model for model, price in prices.items() if price is None]
    if missing:
        raise SystemExit(f"litellm's bundled map has no price for {', '.join(missing)}")
    models = ModelCatalog({}, fast, {"fast": fast, "strong": strong})
    model = PricedModel(answer, prices)  # type: ignore[arg-type]
    tally = Tally(roles=Counter())
    for case in cases:
        engine = Engine(
            config=EngineConfig(default_model=fast, models=models, cwd=ROOT),
            pack=pack,
            router=router,
            model=model,
            confirm=SaysYes(),
        )
        engine.conversation.extend(history_messages(case))
        async for event in engine.run_turn(case.text):
            if isinstance(event, RequestBuilt) and event.round == 1:
                tally.roles[event.role or "default"] += 1  # type: ignore[index]
        turn = engine.costs.ledger.turns[-1]
        assert turn.cost is not None and turn.baseline_cost is not None
        tally.turns += 1
        tally.routed += turn.cost
        tally.always_strong += turn.baseline_cost
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--evals", default="bench/evals/conversation.jsonl,bench/evals/default.jsonl"
    )
    parser.add_argument("--answer-chars", type=int, default=1600)
    args = parser.parse_args()

    pack = load_pack("default")
    router = real_router(pack)
    answer = ("This is a scripted answer of a realistic length. " * 100)[: args.answer_chars]
    rows = []
    for path in args.evals.split(","):
        cases = read_eval_file(ROOT / path, pack.names)
        for pair in PAIRS:
            tally = asyncio.run(replay(pack, router, cases, pair, answer))
            roles = tally.roles or Counter()
            saved = 1 - tally.routed / tally.always_strong
            rows.append(
                (
                    Path(path).name,
                    f"{pair[0]}: {pair[1].split('/')[-1]} / {pair[2].split('/')[-1]}",
                    str(tally.turns),
                    f"{roles['fast']}/{roles['strong']}/{roles['default']}",
                    f"${tally.always_strong:.4f}",
                    f"${tally.routed:.4f}",
                    f"{saved:.0%}",
                )
            )
    print(
        table(
            (
                "EVAL SET",
                "FAST / STRONG",
                "TURNS",
                "FAST/STRONG/DEFAULT",
                "ALWAYS STRONG",
                "ROUTED",
                "SAVED",
            ),
            rows,
            right=(2, 4, 5, 6),
        )
    )
    print(
        f"answers {args.answer_chars} characters; tokens = characters / 4 on both sides; "
        "prices: litellm's bundled map; default = the default model (the fast one)"
    )


if __name__ == "__main__":
    main()
