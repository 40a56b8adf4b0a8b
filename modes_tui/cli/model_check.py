"""`modes-tui models --check`: one tiny request per configured model, and what came back.

Each model is called once with a one-line question and a small answer cap; every model is
tried even when one fails, and each failure is reported with its own reason (the provider's
words, through the one sanitiser). Exit 1 when any model failed.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modes_tui.cli.common import EXIT_FAILURE, EXIT_OK, say, say_json
from modes_tui.core.config.models import ModelCatalog
from modes_tui.core.errors import ProviderError
from modes_tui.core.model.wire import ModelRequest, TextChunk

PROMPT = "Reply with the single word OK."
ANSWER_TOKENS = 8
"""Enough for "OK" in any tokenizer, small enough to cost nothing that matters."""
SHOWN_ANSWER = 60


@dataclass(frozen=True, slots=True)
class CheckResult:
    """What one model did with the tiny request."""

    name: str
    """The alias (or litellm id) checked."""
    model: str
    """The litellm id called."""
    ok: bool
    """It answered."""
    seconds: float
    """How long the call took."""
    answer: str = ""
    """The start of its answer."""
    kind: str = ""
    """Why it failed: auth, connection, not_found, timeout, ..."""
    error: str = ""
    """The provider's message, and the hint when there is one."""

    def to_dict(self) -> dict[str, Any]:
        """Plain values for `--json`."""
        return {
            "name": self.name,
            "model": self.model,
            "ok": self.ok,
            "seconds": round(self.seconds, 3),
            "answer": self.answer,
            "kind": self.kind or None,
            "error": self.error or None,
        }


async def check_one(adapter: Any, catalog: ModelCatalog, name: str) -> CheckResult:
    """Call `name` once; any failure becomes a result, never an exception."""
    started = time.monotonic()
    model = catalog.resolve(name).model
    request = ModelRequest(
        model=name,
        messages=({"role": "user", "content": PROMPT},),
        max_tokens=ANSWER_TOKENS,
    )
    text: list[str] = []
    try:
        async for chunk in adapter.stream(request):
            if isinstance(chunk, TextChunk):
                text.append(chunk.text)
    except ProviderError as error:
        reason = " ".join(error.provider_message.split())[:300]
        hint = f"; {error.hint}" if error.hint else ""
        return CheckResult(
            name, model, False, time.monotonic() - started, "", error.kind, reason + hint
        )
    except Exception as error:  # noqa: BLE001 - one broken model must not hide the others
        reason = f"{type(error).__name__}: {error}"
        return CheckResult(name, model, False, time.monotonic() - started, "", "unknown", reason)
    answer = " ".join("".join(text).split())[:SHOWN_ANSWER]
    return CheckResult(name, model, True, time.monotonic() - started, answer)


async def check_all(adapter: Any, catalog: ModelCatalog, names: list[str]) -> list[CheckResult]:
    """Every model in turn (one at a time: a local model would not serve two at once)."""
    return [await check_one(adapter, catalog, name) for name in names]


def check_models(
    args: argparse.Namespace,
    catalog: ModelCatalog,
    names: list[str],
    local_model_path: Path | None = None,
) -> int:
    """Check `names`, print a table (or JSON), return 1 when any failed."""
    from modes_tui.llm.litellm_model import LiteLLMChatModel
    from modes_tui.store.export import table

    adapter = LiteLLMChatModel(
        models=catalog, timeout=args.timeout, local_model_path=local_model_path
    )
    results = asyncio.run(check_all(adapter, catalog, names))
    failed = [result for result in results if not result.ok]
    if args.json:
        say_json([result.to_dict() for result in results])
        return EXIT_FAILURE if failed else EXIT_OK
    rows = [
        (
            result.name,
            result.model,
            f"{result.seconds:.1f} s",
            f"ok: {result.answer!r}" if result.ok else f"FAILED ({result.kind}): {result.error}",
        )
        for result in results
    ]
    say(table(("MODEL", "LITELLM ID", "TIME", "RESULT"), rows, right=(2,)))
    say(f"{len(results) - len(failed)} of {len(results)} answered")
    return EXIT_FAILURE if failed else EXIT_OK
