"""The folded note that says older turns were summarised for the model, summary inside.

Shown in a turn where a compaction happened (near the limit, or after a provider's context
error) and at the bottom of the chat after `/compact`. The turns themselves stay on screen:
only what the model is given changed. The summary is model text: it arrives here through
`terminal_safe` (the safe events, or `add_compaction`).
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Collapsible, Static

from modes_tui.core.history.compaction import Compaction
from modes_tui.core.terminal_text import terminal_safe
from modes_tui.tui.stream_fit import FitsInStream


class CompactionNote(FitsInStream, Collapsible):
    """`⋯ compacted N earlier turn(s) for the model (...)`, folded; the summary unfolds."""

    DEFAULT_CSS = """
    CompactionNote {
        margin: 0 0 0 1;
        padding: 0;
        border-top: none;
    }
    CompactionNote CollapsibleTitle { color: $text-muted; }
    CompactionNote Static { color: $text-muted; padding: 0 1; }
    """

    def __init__(self, compaction: Compaction) -> None:
        summary = Static(Text(terminal_safe(compaction.summary)), classes="summary")
        title = terminal_safe(f"⋯ {compaction.describe()}")
        super().__init__(summary, title=title, collapsed=True, classes="compaction")
