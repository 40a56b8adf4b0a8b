"""Writes `session_v1.jsonl` with the engine of the checkout on PYTHONPATH (kept for the record).

The committed file was written by main before session records were typed, so the
records test can prove that today's typed records read and write the same bytes:

    PYTHONPATH=/path/to/that/checkout python tests/data/write_session_v1.py OUT_DIR
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import yaml

from modes_tui.core.engine.config import EngineConfig
from modes_tui.core.engine.engine import Engine
from modes_tui.core.errors import ProviderError
from modes_tui.core.history.events import TextDelta, TurnEvent
from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.router import Router
from modes_tui.llm.fake import ScriptedModel, ScriptedReply

try:
    from modes_tui.store.session_log import SessionLog
except ImportError:  # a checkout from before store/sessions.py was split
    from modes_tui.store.sessions import SessionLog  # type: ignore[attr-defined,no-redef]


async def main(out: Path) -> None:
    pack_dir = out / "pack"
    pack_dir.mkdir(parents=True, exist_ok=True)
    (pack_dir / "router.yaml").write_text(
        yaml.safe_dump({"classifier": "keyword", "fallback": "chat"})
    )
    modes = {
        "chat": {"description": "Everyday chat.", "keywords": ["hello"]},
        "code": {"description": "Code.", "keywords": ["python"], "tools": ["read_file"]},
    }
    for name, data in modes.items():
        (pack_dir / f"{name}.yaml").write_text(yaml.safe_dump(data))
    (out / "a.txt").write_text("alpha\n")
    pack = load_pack(profiles_dir=pack_dir)
    model = ScriptedModel().script(
        ScriptedReply("Looking.", tool_calls=[("read_file", {"path": "a.txt"})]),
        ScriptedReply("It says «alpha».", reasoning="read it"),
        ScriptedReply(error=ProviderError("rate_limit", "slow down", hint="wait", model="m")),
        ScriptedReply("Hello again after the retry."),
        ScriptedReply("A long answer " * 20, chunk_size=5, delay=0.001),
        ScriptedReply("Code's answer to the python question."),
        ScriptedReply("Chat's answer after the correction."),
        ScriptedReply("Edited answer."),
    )
    log = SessionLog(out / "session_v1.jsonl")
    log.record(
        "meta",
        0,
        id="session_v1",
        created="2026-12-03T05:00:00.000+00:00",
        pack=pack.name,
        cwd="/home/someone",
        app_version="0.1.0",
        model="scripted/plain",
        title=None,
    )
    engine = Engine(
        config=EngineConfig(default_model="scripted/plain", cwd=out),
        pack=pack,
        router=Router(pack, KeywordClassifier()),
        model=model,
        session=log,
    )
    engine.checkpoint_seconds = 0.0  # a checkpoint record on every chunk of the long answer

    async def drain(events: AsyncIterator[TurnEvent]) -> None:
        async for _ in events:
            pass

    await drain(engine.run_turn("a python question"))
    await drain(engine.run_turn("hello"))
    await drain(engine.retry())
    events = engine.run_turn("hello, a long one")
    async for event in events:
        if isinstance(event, TextDelta):
            engine.cancel()
    await drain(engine.run_turn("python again", force="code"))
    await drain(engine.correct("chat"))
    await drain(engine.resend("hello, edited"))
    engine.clear()
    log.close()


if __name__ == "__main__":
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    asyncio.run(main(Path(sys.argv[1])))
