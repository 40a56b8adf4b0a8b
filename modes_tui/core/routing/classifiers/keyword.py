"""The keyword backend: deterministic rules from each profile's `keywords:`.

For tests, explicit triggers and machines without an encoder. A keyword matches as a
whole word (or phrase), case-insensitively; the mode with the most matches wins.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from modes_tui.core.packs.profiles import Profile
from modes_tui.core.values.entry import HistoryEntry
from modes_tui.core.values.route import ClassifierInfo, Decision


@lru_cache(maxsize=2048)
def _pattern(keyword: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)" + re.escape(keyword) + r"(?!\w)", re.IGNORECASE)


class KeywordClassifier:
    """Counts keyword hits per mode; the most hits wins, ties go to roster order."""

    def classify(
        self,
        message: str,
        history: Sequence[HistoryEntry],
        modes: Sequence[Profile],
        instructions: str,
        inputs: Mapping[str, Any],
    ) -> Decision:
        hits: dict[str, list[str]] = {}
        for mode in modes:
            found = [k for k in mode.keywords if _pattern(k).search(message)]
            if found:
                hits[mode.name] = found
        if not hits:
            return Decision(None, None, "no keyword matched")
        total = sum(len(found) for found in hits.values())
        probabilities = {mode.name: len(hits.get(mode.name, ())) / total for mode in modes}
        best = max(modes, key=lambda mode: len(hits.get(mode.name, ())))
        words = ", ".join(hits[best.name][:5])
        return Decision(best.name, probabilities[best.name], f"keywords: {words}", probabilities)

    def trace(self) -> ClassifierInfo:
        return ClassifierInfo("keyword", None)
