"""`python -m modes_tui` runs the command line."""

from modes_tui.cli import main

raise SystemExit(main())
