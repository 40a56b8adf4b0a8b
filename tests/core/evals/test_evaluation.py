"""Eval files, metrics, threshold fitting, and `modes-tui eval`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from modes_tui.cli import main
from modes_tui.core.errors import ModesError
from modes_tui.core.evals.cases import EvalCase, EvalFileError, read_eval_file
from modes_tui.core.evals.report import format_report
from modes_tui.core.evals.scoring import (
    FALLBACK,
    NONE,
    Outcome,
    evaluate,
    fit_threshold,
    percentile,
)
from modes_tui.core.values.route import Decision, Route
from tests.conftest import PackWriter


def outcome(expected: str | None, mode: str, confidence: float, ms: float) -> Outcome:
    route = Route(mode, "classifier", "r", Decision(mode, confidence, "r"), duration_ms=ms)
    return Outcome(EvalCase(f"case {ms}", expected), route)


# Modes a and b; a is the fallback. Worked by hand in the comments below.
OUTCOMES = [
    outcome("a", "a", 0.9, 1),  # right
    outcome("a", "b", 0.8, 2),  # wrong
    outcome("b", "b", 0.6, 3),  # right
    outcome("b", "b", 0.3, 4),  # at 0.5: falls back to a -> wrong
    outcome(None, "a", 0.2, 5),  # at 0.5: falls back -> right
    outcome(None, "b", 0.7, 6),  # routed to b -> wrong
    outcome("a", "b", 0.4, 7),  # at 0.5: falls back to a -> right (a was expected)
]


def test_metrics_on_a_small_example_worked_by_hand() -> None:
    report = evaluate(OUTCOMES, ["a", "b"], "a", 0.5)
    assert (report.correct, report.cases) == (4, 7)
    assert report.accuracy == pytest.approx(4 / 7)
    assert report.in_scope_accuracy == pytest.approx(3 / 5)
    a, b = report.per_mode["a"], report.per_mode["b"]
    # a: expected in cases 1, 2, 7; routed in 1, 4, 7 (5 fell back rightly: nobody's fault)
    assert (a.precision, a.recall, a.support, a.routed) == (
        pytest.approx(2 / 3),
        pytest.approx(2 / 3),
        3,
        3,
    )
    # b: expected in 3, 4; routed in 2, 3, 6
    assert (b.precision, b.recall, b.support, b.routed) == (pytest.approx(1 / 3), 0.5, 2, 3)
    assert report.macro_f1 == pytest.approx((2 / 3 + 0.4) / 2)
    # fell back: 4, 5, 7; of those only 5 expected it; null cases: 5, 6
    fallback = report.fallback
    assert (fallback.precision, fallback.recall) == (pytest.approx(1 / 3), 0.5)
    assert report.confusion == {
        "a": {"a": 1, "b": 1, FALLBACK: 1},
        "b": {"a": 0, "b": 1, FALLBACK: 1},
        NONE: {"a": 0, "b": 1, FALLBACK: 1},
    }
    assert (report.latency_p50_ms, report.latency_p95_ms) == (4, pytest.approx(6.7))
    data = report.to_dict()
    assert data["accuracy"] == round(4 / 7, 4) and data["fallback"]["recall"] == 0.5


def test_without_a_threshold_routes_stand_as_classified() -> None:
    report = evaluate(OUTCOMES, ["a", "b"], "a", None)
    assert report.correct == 3  # cases 1, 3, 4
    assert report.fallback.routed == 0 and report.fallback.precision is None


def test_a_route_that_fell_back_for_any_reason_counts_as_a_fallback() -> None:
    failed = Route("a", "fallback", "Classifier failed: OSError: x", error=OSError("x"))
    report = evaluate([Outcome(EvalCase("t", None), failed)], ["a", "b"], "a", 0.5)
    assert report.correct == 1 and report.errors == 1


def test_fit_shows_both_sides_of_the_trade_and_picks_the_best_balance() -> None:
    fit = fit_threshold(OUTCOMES, ["a", "b"], "a", [0.0, 0.5, 0.75])
    rows = {row.threshold: row for row in fit.rows}
    assert (rows[0.0].in_scope_accuracy, rows[0.0].fallback_recall) == (pytest.approx(0.6), 0.0)
    assert rows[0.0].balance == 0.0
    assert (rows[0.5].in_scope_accuracy, rows[0.5].fallback_recall) == (pytest.approx(0.6), 0.5)
    assert rows[0.5].balance == pytest.approx(2 * 0.6 * 0.5 / 1.1)
    assert (rows[0.75].in_scope_accuracy, rows[0.75].fallback_recall) == (pytest.approx(0.4), 1.0)
    assert rows[0.75].balance == pytest.approx(2 * 0.4 / 1.4)
    assert fit.best is rows[0.75] and fit.has_null_cases


def test_fit_without_null_cases_maximises_in_scope_accuracy() -> None:
    in_scope = [o for o in OUTCOMES if o.case.mode is not None]
    fit = fit_threshold(in_scope, ["a", "b"], "a")
    assert not fit.has_null_cases
    assert fit.best.threshold == 0.0 and fit.best.fallback_recall is None


def test_percentile_interpolates() -> None:
    assert percentile([], 50) is None
    assert percentile([3.0], 95) == 3.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5


# --------------------------------------------------------------------------- files


def write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_reading_a_good_file(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '{"text": "hi", "mode": "chat"}',
        "",
        '{"text": "and in euros?", "mode": null, "history": [{"role": "user", "content": "x"}, "plain"]}',
    )
    cases = read_eval_file(path, ["chat", "code"])
    assert [(c.text, c.mode, c.line) for c in cases] == [
        ("hi", "chat", 1),
        ("and in euros?", None, 3),
    ]
    assert cases[1].conversation() == [
        {"role": "user", "content": "x"},
        "plain",
        {"role": "user", "content": "and in euros?"},
    ]


def test_every_bad_line_is_named_with_its_file_and_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '{"text": "fine", "mode": "chat"}',
        "{not json",
        '["a list"]',
        '{"mode": "chat"}',
        '{"text": "no mode key"}',
        '{"text": "x", "mode": "cod"}',
        '{"text": "x", "mode": "chat", "history": [{"role": "bot", "content": "?"}]}',
        '{"text": "x", "mode": "chat", "extra": 1}',
    )
    with pytest.raises(EvalFileError) as caught:
        read_eval_file(path, ["chat", "code"])
    message = str(caught.value)
    assert message.startswith(f"{path} has 7 bad lines:")
    for line, words in [
        (2, "not valid JSON"),
        (3, "must be a JSON object"),
        (4, "`text` must be non-empty text"),
        (5, "`mode` is missing"),
        (6, "`mode` 'cod' is not a mode of this pack (modes: chat, code)"),
        (7, "`history[0]` must be"),
        (8, "unknown key 'extra'"),
    ]:
        assert f"{path}:{line}: {words}" in message


def test_an_empty_or_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ModesError, match="no cases"):
        read_eval_file(write(tmp_path, ""))
    with pytest.raises(ModesError, match="no such file"):
        read_eval_file(tmp_path / "absent.jsonl")


# --------------------------------------------------------------------------- command line


@pytest.fixture
def keyword_pack(write_pack: PackWriter) -> Path:
    return write_pack(router={"classifier": "keyword", "fallback": "chat", "below_confidence": 0.5})


@pytest.fixture
def cases_file(tmp_path: Path) -> Path:
    lines = [
        {"text": "hello friend", "mode": "chat"},
        {"text": "python segfault", "mode": "code"},
        {"text": "segfault in my python loop", "mode": "code"},
        {"text": "the weather", "mode": "chat"},
        {"text": "zzzz", "mode": None},
        {"text": "hello python", "mode": "code"},
    ]
    path = tmp_path / "eval.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def test_eval_prints_the_report(
    keyword_pack: Path, cases_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", str(cases_file), "--profiles", str(keyword_pack)]) == 0
    out = capsys.readouterr().out
    assert f"{cases_file}: 6 cases, pack testpack, classifier keyword" in out
    # "hello python" ties chat and code (0.5 each): keyword picks chat, so 5 of 6 are right.
    assert "accuracy 0.833 (5/6)" in out
    assert (
        "fallback: precision 0.50  recall 1.00  (cases expecting it: 1, routes that fell back: 2)"
        in out
    )
    assert "confusion (rows: expected, columns: routed; fallback = fell back)" in out
    assert "latency: p50" in out


def test_eval_json_and_fit(
    keyword_pack: Path, cases_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", str(cases_file), "--profiles", str(keyword_pack), "--json", "--fit"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["cases"] == 6 and data["classifier"] == "keyword"
    assert data["below_confidence"] == 0.5
    assert set(data["per_mode"]) == {"chat", "code"}
    assert len(data["fit"]["rows"]) == 20 and data["fit"]["has_null_cases"]
    assert data["fit"]["best"]["below_confidence"] in {
        r["below_confidence"] for r in data["fit"]["rows"]
    }


def test_eval_fit_prints_the_threshold_table(
    keyword_pack: Path, cases_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", str(cases_file), "--profiles", str(keyword_pack), "--fit"]) == 0
    out = capsys.readouterr().out
    assert "below_confidence  in-scope acc  fallback recall" in out
    assert "(current)" in out and "<- pick" in out
    assert "pick: below_confidence " in out


def test_eval_reports_bad_lines_and_exits_1(
    keyword_pack: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, '{"text": "hi", "mode": "chta"}')
    assert main(["eval", str(path), "--profiles", str(keyword_pack)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:1: `mode` 'chta' is not a mode of this pack" in err


def test_eval_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval"]) == 2
    assert "FILE.jsonl" in capsys.readouterr().err
    assert main(["eval", "x.jsonl", "--threshold", "3"]) == 2


def test_eval_of_a_missing_file_exits_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["eval", str(tmp_path / "nope.jsonl")]) == 1
    assert "no such file" in capsys.readouterr().err


def test_eval_with_the_embedding_backend_on_a_fake_encoder(
    keyword_pack: Path,
    cases_file: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.support.fake_encoder import HashingEncoder

    monkeypatch.setattr("modes_tui.llm.encoders.load_encoder", lambda spec: HashingEncoder(spec))
    args = ["eval", str(cases_file), "--profiles", str(keyword_pack), "--classifier", "embedding"]
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["classifier"] == "embedding (local/all-MiniLM-L6-v2)"
    assert data["classifier_errors"] == 0


def test_eval_shows_progress_on_stderr_for_long_files(
    keyword_pack: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, *['{"text": "hello", "mode": "chat"}'] * 40)
    assert main(["eval", str(path), "--profiles", str(keyword_pack)]) == 0
    err = capsys.readouterr().err
    assert "routing 10/40" in err and "routing 40/40" in err


def _default_pack_report(name: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    eval_file = Path(__file__).resolve().parents[3] / "bench" / "evals" / name
    assert main(["eval", str(eval_file), "--json"]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert report["classifier_errors"] == 0
    return report


@pytest.mark.local
@pytest.mark.parametrize(
    ("eval_file", "cases", "floor"),
    [
        # measured 0.970 (129/133) with no wrong route at >= 0.9; the floor leaves two cases
        ("default.jsonl", 133, 0.95),
        # written before the pack was tuned and never read for it: measured 0.967 (58/60)
        # with no wrong route at >= 0.9; the floor leaves two cases
        ("default_heldout.jsonl", 60, 0.93),
        # written in a later session before any change of it, scored only as a whole
        ("default_heldout_b.jsonl", 60, 0.90),
        # quoted and pasted material, follow-ups and switches, written before the examples of
        # 2026-12-07 and read once after them: measured 0.917 (44/48), 1 wrong at >= 0.9;
        # 0.938 with the text-verb rule
        ("framing_heldout_c.jsonl", 48, 0.875),
        # written after those examples, scored as a whole only: 0.850, then 0.875 (35/40)
        # with the text-verb rule, 1 wrong at >= 0.9; the floor leaves two cases
        ("framing_heldout_d.jsonl", 40, 0.825),
        # conversations whose previous turn quoted material of another kind, written before
        # the "show that <clause>" fix: 0.917 (33/36), then 0.944 (34/36), 0 wrong at >= 0.9
        ("after_quote_heldout.jsonl", 36, 0.889),
        ("after_quote_dev.jsonl", 18, 0.833),
        # 50 plain requests, 10 per mode, written before the change they checked (the words
        # beside the vectors, not kept): 0.960 (48/50) before and after, 0 wrong at >= 0.9
        ("plain_heldout.jsonl", 50, 0.92),
    ],
)
def test_the_default_pack_routes_its_eval_files_with_at_most_one_confident_wrong_route(
    eval_file: str, cases: int, floor: float, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _default_pack_report(eval_file, capsys)
    assert report["cases"] == cases
    assert report["accuracy"] >= floor, report["confusion"]
    assert report["wrong_sure"]["count"] <= 1, report["wrong_sure"]


EVALS = Path(__file__).resolve().parents[3] / "bench" / "evals"
DEV_FILES = (
    "after_quote_dev.jsonl",
    "default.jsonl",
    "framing_dev.jsonl",
    "framing_dev_b.jsonl",
    "framing_dev_c.jsonl",
    "short_dev.jsonl",
    "conversation.jsonl",
    "imperative_dev_d.jsonl",  # held out for the first verb list, then the list grew on it
    "mixed_dev_g.jsonl",
    "mixed_dev_i.jsonl",
)
"""The default pack's eval files that rules and examples were tuned on."""
NEAR = 0.85
"""Two lines this alike are one line reworded (`difflib`'s ratio of matching characters, both
lower-cased with punctuation dropped)."""


def _words(text: str) -> str:
    return " ".join("".join(c if c.isalnum() else " " for c in text.lower()).split())


def _seen_lines() -> list[tuple[str, str]]:
    """What the default pack's router was built or tuned on: its examples and the dev lines
    of four words or more (a two-word line such as "fix it" is bound to recur)."""
    import yaml

    seen = []
    for profile in sorted(
        (Path(__file__).resolve().parents[3] / "profiles/default").glob("*.yaml")
    ):
        for example in (yaml.safe_load(profile.read_text(encoding="utf-8")) or {}).get(
            "examples"
        ) or []:
            seen.append((_words(str(example)), f"{profile.name} example"))
    for name in DEV_FILES:
        for line in (EVALS / name).read_text(encoding="utf-8").splitlines():
            text = _words(json.loads(line)["text"])
            if len(text.split()) >= 4:
                seen.append((text, name))
    return seen


@pytest.mark.parametrize("held_out", sorted(p.name for p in EVALS.glob("*heldout*.jsonl")))
def test_a_held_out_file_repeats_no_example_and_no_dev_line(held_out: str) -> None:
    """A held-out figure claims the router generalises, so none of its lines may be one the
    router was built from (a pack example) or tuned on (a dev file's line), reworded or not.
    The scored line is checked; a conversation's earlier turns are context and may be common."""
    from difflib import SequenceMatcher

    seen = _seen_lines()
    repeats = []
    for number, line in enumerate((EVALS / held_out).read_text(encoding="utf-8").splitlines(), 1):
        text = _words(json.loads(line)["text"])
        for other, where in seen:
            if SequenceMatcher(None, text, other).ratio() >= NEAR:
                repeats.append(f"{held_out}:{number} {text!r} ~ {other!r} ({where})")
    assert repeats == []


@pytest.mark.local
def test_the_support_pack_routes_its_eval_file_and_falls_back_off_topic(
    capsys: pytest.CaptureFixture[str],
) -> None:
    eval_file = Path(__file__).resolve().parents[3] / "bench" / "evals" / "support.jsonl"
    assert main(["eval", str(eval_file), "--pack", "support", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["cases"] == 56 and report["classifier_errors"] == 0
    assert report["accuracy"] >= 0.85, report["confusion"]
    assert report["fallback"]["recall"] >= 0.75, report["confusion"]


# --------------------------------------------------------------------------- calibration


def test_reliability_and_ece_are_worked_by_hand() -> None:
    from modes_tui.core.routing.calibration import expected_calibration_error, reliability

    # bin 0.9-1.0: 0.95 and 0.95, one right -> gap 0.45 over 2; bin 0.2-0.3: 0.25 wrong ->
    # gap 0.25 over 1; bin 0.6-0.7: 0.6 right -> gap 0.4 over 1. ECE = (0.9 + 0.25 + 0.4) / 4.
    table = reliability([0.95, 0.95, 0.25, 0.6, 1.0], [True, False, False, True, True])
    rows = {row.low: row for row in table if row.count}
    assert rows[0.9].count == 3 and rows[0.9].accuracy == pytest.approx(2 / 3)
    assert rows[0.9].confidence == pytest.approx((0.95 + 0.95 + 1.0) / 3)
    assert rows[0.2].count == 1 and rows[0.2].accuracy == 0.0
    ece = expected_calibration_error(table)
    expected = (3 * abs(2.9 / 3 - 2 / 3) + 0.25 + 0.4) / 5
    assert ece == pytest.approx(expected)
    assert expected_calibration_error(reliability([], [])) is None


def test_the_report_has_ece_and_counts_a_routed_null_case_as_wrong() -> None:
    report = evaluate(OUTCOMES, ["a", "b"], "a", 0.5)
    assert sum(row.count for row in report.reliability) == len(OUTCOMES)
    # raw routes right: 0.9 (a), 0.6 (b), 0.3 (b); wrong: 0.8, 0.2 (null), 0.7 (null), 0.4
    by_low = {row.low: row for row in report.reliability if row.count}
    assert by_low[0.2].accuracy == 0.0 and by_low[0.3].accuracy == 1.0
    data = report.to_dict()["calibration"]
    assert data["ece"] == pytest.approx(report.ece, abs=1e-4)
    text = format_report(report)
    assert "calibration: ECE" in text and "mean conf" in text


# --------------------------------------------------------------------------- eval --learn


def test_eval_learn_records_each_wrong_route_and_prints_the_curve(
    write_pack: PackWriter,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from modes_tui.core.paths import app_dirs
    from modes_tui.store.corrections import CorrectionStore
    from tests.support.fake_encoder import HashingEncoder

    monkeypatch.setattr("modes_tui.llm.encoders.load_encoder", lambda spec: HashingEncoder(spec))
    pack = write_pack(
        router={"classifier": "embedding", "fallback": "chat"},
        modes={
            "chat": {"description": "films food travel", "examples": ["recommend a film"]},
            "code": {"description": "python bugs", "examples": ["my python loop hangs"]},
        },
    )
    lines = [
        {"text": "recommend a kubernetes cluster setup", "mode": "code"},  # wrong -> learned
        {"text": "recommend a kubernetes cluster setup", "mode": "code"},  # right, thanks to it
        {"text": "recommend a film", "mode": "chat"},
        {"text": "zzz qqq", "mode": None},  # routed to a mode: wrong, learned as a negative
    ]
    path = write(tmp_path, *[json.dumps(line) for line in lines])
    args = ["eval", str(path), "--profiles", str(pack), "--learn", "--block", "2"]
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [b["correct"] for b in data["blocks"]] == [1, 1]
    assert [b["corrections"] for b in data["blocks"]] == [1, 2]
    assert data["fallback_corrections"] == 1
    store = CorrectionStore.for_pack(app_dirs().data, "testpack")
    learned, negative = store.corrections()
    assert (negative.text, negative.corrected_mode, negative.routed_mode) == (
        "zzz qqq",
        "chat",
        "chat",
    )
    assert (learned.text, learned.corrected_mode, learned.source) == (
        "recommend a kubernetes cluster setup",
        "code",
        "eval",
    )
    assert learned.routed_mode == "chat" and learned.encoder == "local/all-MiniLM-L6-v2"
    assert data["correction_ids"] == [learned.id, negative.id] and data["store"] == str(store.path)
    # A plain eval now measures the learned router; clearing the store undoes it.
    assert main(["eval", str(path), "--profiles", str(pack), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["per_mode"]["code"]["recall"] == 1.0
    assert main([*args]) == 0
    out = capsys.readouterr().out
    assert "lines  accuracy  corrections so far" in out and "1-2" in out
    assert "1 of them of lines expecting the fallback (negative examples)" in out
    assert "corrections clear --pack testpack" in out
    assert main([*args, "--fit"]) == 1
    assert "--learn takes no --fit" in capsys.readouterr().err
