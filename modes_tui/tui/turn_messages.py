"""Messages a drawn turn sends up to the app.

Their own module because both sides need them at import: `turn_view` posts them and
`app` handles them, while `chat` imports `turn_view` only on first use (the Markdown parser
stays off the path to the first frame). Kept here, neither `chat` nor `turn_view` imports
the other at run time.
"""

from __future__ import annotations

from textual.message import Message


class RetryRequested(Message):
    """The user asked to retry a failed turn (its Retry button)."""

    def __init__(self, number: int) -> None:
        self.number = number
        """The turn to retry."""
        super().__init__()
