"""modes-tui: a terminal chat assistant that routes every turn to a mode."""

__version__ = "0.1.0"
