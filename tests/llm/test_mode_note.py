"""The mode-change note: it sits in the request's system part, and an echo never shows.

The embedded model is a base model reading a plain transcript; with the note in the user's
message it copied the note as its answer (issue 11). The `local` test runs the real model
from working directories with different paths, because the path is part of the prompt.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.engine.mode_note import (
    NOTE_PREFIX,
    NoteEchoFilter,
    mode_change_note,
    strip_note_echoes,
)
from modes_tui.core.history.conversation import Message
from modes_tui.core.history.events import (
    RequestBuilt,
    RouteDecided,
    TextDelta,
    TurnEvent,
    TurnFinished,
)

NOTE = mode_change_note("chat", "shell")


def test_the_note_names_both_modes_and_no_mode() -> None:
    assert NOTE.startswith("[Mode changed from chat to shell: ") and NOTE.endswith("]")
    assert mode_change_note(None, "code").startswith("[Mode changed from no mode to code:")
    assert mode_change_note("code", None).startswith("[Mode changed from code to no mode:")


@pytest.mark.parametrize(
    ("answer", "shown"),
    [
        (NOTE, ""),
        (f"{NOTE}\n\ngit reset --soft HEAD~1", "git reset --soft HEAD~1"),
        (f"Sure. {NOTE} Run git log.", "Sure. Run git log."),
        (f"{NOTE}{NOTE}ok", "ok"),
        ("[Mode changed from chat to", ""),  # the model stopped inside a note
        ("[Mode is a word in brackets]", "[Mode is a word in brackets]"),
        ("[1, 2, 3] and [Mode", "[1, 2, 3] and [Mode"),
        ("plain answer", "plain answer"),
        ("", ""),
    ],
)
def test_an_echoed_note_is_removed_however_the_stream_is_cut(answer: str, shown: str) -> None:
    assert strip_note_echoes(answer) == shown
    for size in (1, 2, 3, 5, 7, 11, 64):
        echo = NoteEchoFilter()
        pieces = [answer[i : i + size] for i in range(0, len(answer), size)]
        assert "".join(echo.feed(piece) for piece in pieces) + echo.finish() == shown, size


def test_text_that_may_start_a_note_waits_only_until_it_cannot() -> None:
    echo = NoteEchoFilter()
    assert echo.feed("Hello [Mo") == "Hello "
    assert echo.feed("on") == "[Moon"
    assert echo.finish() == ""


class _Runner:
    """Stands in for llama.cpp: streams fixed pieces, counts tokens by characters."""

    n_ctx = 4096

    def __init__(self, pieces: list[str]) -> None:
        self.pieces = pieces
        self.prompts: list[str] = []

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    def chat(self, messages: Any, params: Any, stop: threading.Event | None = None) -> Any:
        from modes_tui.llm.llama_runner import fit_prompt

        yield from self.generate(
            fit_prompt(messages, params, self.n_ctx, self.count_tokens), params
        )

    def generate(self, prompt: str, params: Any, stop: threading.Event | None = None) -> Any:
        from modes_tui.llm.llama_runner import Piece

        self.prompts.append(prompt)
        for piece in self.pieces:
            yield Piece(piece)
        yield Piece("", "stop", 10, len(self.pieces))


def test_the_local_provider_drops_an_echoed_note_split_across_tokens() -> None:
    from modes_tui.llm import local

    answer = f" {NOTE}\n\nUse git reset --soft HEAD~1."
    runner = _Runner([answer[i : i + 3] for i in range(0, len(answer), 3)])
    handler = local.LocalLLM(runner)  # type: ignore[arg-type]
    messages = [
        {"role": "system", "content": f"BASE\n\n{NOTE}"},
        {"role": "user", "content": "undo my last commit"},
    ]
    pieces = list(handler._pieces(messages, {}))
    text = "".join(p.text for p in pieces if p.finish_reason is None)
    assert text == "Use git reset --soft HEAD~1."
    assert pieces[-1].finish_reason == "stop"
    # in the transcript the note is part of the head, not a line the user said
    prompt = runner.prompts[0]
    assert f"User: {NOTE_PREFIX}" not in prompt and prompt.index(NOTE) < prompt.index("User:")


# --------------------------------------------------------------------------- real model


class _Records:
    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def record(self, type: str, turn: int, **fields: Any) -> None:
        self.records.append({"type": type, "turn": turn, **fields})


@pytest.fixture(scope="module")
def workdirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Path]]:
    base = tmp_path_factory.mktemp("cwd")
    names = ["plain", "with spaces in it", "ünïcödé ☃ path", "a" * 60 + "/deep/er/still"]
    folders = [base / name for name in names]
    for folder in folders:
        folder.mkdir(parents=True)
    yield folders


@pytest.mark.local
async def test_the_embedded_model_never_answers_with_the_note_from_any_folder(
    workdirs: list[Path],
) -> None:
    pytest.importorskip("llama_cpp")
    from modes_tui.runtime import build_engine, load_pack
    from tests.support.engine_support import engine_config

    pack = load_pack("default")
    for folder in workdirs:
        session = _Records()
        engine = build_engine(
            engine_config(cwd=folder), pack=pack, classifier="keyword", session=session
        )
        # an earlier exchange in the chat mode, so the shell turn carries the note
        engine.conversation.append(Message("user", "hi"))
        engine.conversation.append(Message("assistant", "Hello! How can I help?", mode="chat"))
        events: list[TurnEvent] = [
            event async for event in engine.run_turn("how do I undo my last commit?", force="shell")
        ]
        routes = [e for e in events if isinstance(e, RouteDecided)]
        assert [r.route.mode_name for r in routes] == ["shell"], folder
        system = next(e for e in events if isinstance(e, RequestBuilt)).request.messages[0]
        assert str(folder) in system["content"]  # the path really is in the prompt
        assert system["content"].endswith(NOTE)
        answer = "".join(e.text for e in events if isinstance(e, TextDelta))
        finished = [e for e in events if isinstance(e, TurnFinished)]
        assert len(finished) == 1 and finished[0].message.content == answer
        assert "Mode changed" not in answer, (folder, answer)
        stored = [r for r in session.records if r["type"] == "assistant"]
        assert stored and all("Mode changed" not in r["message"]["content"] for r in stored)
