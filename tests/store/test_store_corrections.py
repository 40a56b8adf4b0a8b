"""The corrections store: append-only records, torn lines, versions, removal, reopening."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from modes_tui.core.errors import CorrectionsError
from modes_tui.core.paths import app_dirs
from modes_tui.core.routing.ports import CorrectionSource
from modes_tui.core.values.correction import Correction
from modes_tui.core.values.entry import HistoryEntry
from modes_tui.store.corrections import STORE_VERSION, CorrectionStore, corrections_path


def correction(text: str, mode: str = "code", **fields: object) -> Correction:
    return Correction(text=text, corrected_mode=mode, routed_mode="chat", pack="default", **fields)  # type: ignore[arg-type]


@pytest.fixture
def store() -> CorrectionStore:
    return CorrectionStore.for_pack(app_dirs().data, "default")


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_store_lives_in_the_data_dir_per_pack(store: CorrectionStore, modes_home: Path) -> None:
    assert store.path == modes_home / "data" / "corrections" / "default.jsonl"
    assert app_dirs().corrections == store.path.parent
    assert isinstance(store, CorrectionSource)
    assert store.corrections() == () and store.warnings == []
    assert not store.path.exists()  # reading creates nothing


def test_add_writes_one_versioned_line_and_reads_back_every_field(store: CorrectionStore) -> None:
    added = store.add(
        correction(
            "why does my loop hang",
            history=(HistoryEntry("user", "hi"), HistoryEntry("assistant", "hello")),
            classifier="embedding",
            encoder="local/minilm",
            session_id="20260101-000000-beef",
            turn=3,
        )
    )
    (line,) = records(store.path)
    assert line["v"] == STORE_VERSION and line["type"] == "correction" and line["at"]
    assert line["correction"]["id"] == added.id
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    reopened = CorrectionStore(store.path)
    assert reopened.corrections() == (added,)


def test_revision_changes_on_every_write_even_by_another_instance(store: CorrectionStore) -> None:
    other = CorrectionStore(store.path)  # another process, as far as the file knows
    seen = {store.revision}
    first = other.add(correction("one"))
    assert store.revision not in seen
    seen.add(store.revision)
    assert [c.text for c in store.corrections()] == ["one"]
    other.add(correction("two"))
    assert store.revision not in seen
    seen.add(store.revision)
    assert other.remove(first.id)
    assert store.revision not in seen
    assert [c.text for c in store.corrections()] == ["two"]  # a removal counts at once


def test_remove_appends_a_tombstone_and_unknown_ids_write_nothing(store: CorrectionStore) -> None:
    keep = store.add(correction("keep me"))
    drop = store.add(correction("drop me", mode="chat"))
    assert store.remove(drop.id) is True
    assert store.corrections() == (keep,)
    size = store.path.stat().st_size
    assert store.remove(drop.id) is False  # already gone
    assert store.remove("nope") is False
    assert store.path.stat().st_size == size
    assert [r["type"] for r in records(store.path)] == ["correction", "correction", "remove"]
    assert records(store.path)[-1]["id"] == drop.id
    assert CorrectionStore(store.path).corrections() == (keep,)


def test_clear_hides_everything_before_it_and_later_adds_still_count(
    store: CorrectionStore,
) -> None:
    for text in ("a", "b", "c"):
        store.add(correction(text))
    assert store.clear() == 3
    assert store.corrections() == ()
    assert store.clear() == 0  # nothing to clear: nothing written
    after = store.add(correction("d"))
    assert [r["type"] for r in records(store.path)] == ["correction"] * 3 + ["clear", "correction"]
    assert CorrectionStore(store.path).corrections() == (after,)


def test_a_torn_last_line_is_skipped_named_and_the_next_write_starts_a_new_line(
    store: CorrectionStore,
) -> None:
    kept = store.add(correction("kept"))
    with open(store.path, "ab") as handle:  # a writer killed mid-record
        handle.write(b'{"v":1,"type":"correction","correction":{"text":"half')
    reopened = CorrectionStore(store.path)
    assert reopened.corrections() == (kept,)
    (warning,) = reopened.warnings
    assert warning.startswith(f"{store.path}:2: torn last line")
    later = reopened.add(correction("later"))
    assert [c.text for c in CorrectionStore(store.path).corrections()] == ["kept", "later"]
    assert later in reopened.corrections()
    (warning,) = reopened.warnings  # the torn line is now a corrupt line of its own
    assert warning.startswith(f"{store.path}:2: corrupt line skipped")


def test_unknown_versions_types_and_bad_payloads_are_skipped_with_file_and_line(
    store: CorrectionStore,
) -> None:
    good = correction("good").to_dict()
    lines = [
        {"v": 2, "type": "correction", "correction": good},
        {"type": "correction", "correction": good},
        {"v": 1, "type": "rename", "id": "x"},
        {"v": 1, "type": "correction", "correction": {"text": "no mode"}},
        ["not", "a", "record"],
        {"v": 1, "type": "correction", "correction": good},
    ]
    store.path.parent.mkdir(parents=True)
    store.path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert [c.text for c in store.corrections()] == ["good"]
    warnings = store.warnings
    assert [w.split(": ", 1)[0] for w in warnings] == [f"{store.path}:{n}" for n in (1, 2, 3, 4, 5)]
    assert "record version 2" in warnings[0] and "upgrade" in warnings[0]
    assert "record version None" in warnings[1]
    assert "unknown record type 'rename'" in warnings[2]
    assert "unusable correction" in warnings[3]


def test_a_non_utf8_text_survives_as_an_escape(store: CorrectionStore) -> None:
    odd = store.add(correction("bad byte \udcff here"))
    assert CorrectionStore(store.path).corrections() == (odd,)


def test_a_pack_name_that_is_not_a_file_name_gets_a_safe_distinct_file(modes_home: Path) -> None:
    folder = modes_home / "corrections"
    paths = {
        bad: corrections_path(modes_home, bad) for bad in ("../etc", "a/b", ".hidden", "my pack")
    }
    for path in paths.values():
        assert path.parent == folder and path.suffix == ".jsonl"
    assert len(set(paths.values())) == len(paths)
    assert corrections_path(modes_home, "etc") not in paths.values()
    with pytest.raises(CorrectionsError, match="needs the name of its pack"):
        corrections_path(modes_home, "")


def test_an_unwritable_folder_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    store = CorrectionStore(blocker / "corrections" / "default.jsonl")
    with pytest.raises(CorrectionsError, match="cannot open corrections file"):
        store.add(correction("lost?"))
