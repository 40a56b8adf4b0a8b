"""The names of a sessions folder's files, shared by the log, the listing and the titles."""

from __future__ import annotations

SUFFIX = ".jsonl"
"""A session log's file name is `<id>.jsonl`."""
SUMMARIES = ".summaries"
"""The folder beside the logs that holds their summaries and user titles (caches)."""
