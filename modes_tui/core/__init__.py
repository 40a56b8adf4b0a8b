"""The headless domain: packs, routing, the engine, tools, history; no UI, no model library.

Nothing in this package imports textual, prompt_toolkit, litellm, llama_cpp, torch or
sentence_transformers (`tests/test_import_hygiene.py`), nor the adapters or the edges
(`tests/test_architecture.py`). Its parts, from the bottom up (a part imports only from
its own layer or below; the architecture test keeps it so):

    errors.py         the error root `ModesError` and its subclasses per area
    paths.py          where things live: config, data, state and cache dirs
    files.py          atomic writes and safe reads of small files
    yaml_files.py     YAML read with limits (size, depth, aliases)
    terminal_text.py  text made safe for a terminal (control sequences removed)
    control_setting.py  the control setting as a value: auto, off, or a forced mode
    redaction.py      secrets removed from what is written or shown
    values/           the values the parts hand each other: route, decision, correction, framing
    config/           settings the user writes: models, config.yaml's fields, variables, pack names
    model/            the model seam: the `ChatModel` port, requests and the model's events
    tools/            tools a model can call: registry, toolbox, workspace, MCP servers
    edits/            changing files safely: edit tools, diffs, a mode's policy, checkpoints
    packs/            a pack: profiles (modes), prompt templates, fields, the pack's own tools
    history/          what happened: events, conversation, records, ledger, transcript
    context/          conversations that fit: token counts, a request fitted, compaction
    routing/          choosing a mode: the router, classifiers/, corrections, calibration
    evals/            evaluating a router on a pack's cases
    engine/           one user turn, end to end: prepare, rounds, close; its ports

Each sub-package's `__init__` maps its modules and lists its public names in `__all__`;
CONTRIBUTING.md walks one message through these files. Other packages import a public
name from the module that defines it (`from modes_tui.core.<part>.<module> import <name>`);
`__all__` lists those names and is the part's public surface: a name not in it, or
starting with `_`, is private to the part (tests/test_architecture.py). Every name it
lists is bound by the part's `__init__` too (`from modes_tui.core.engine import Engine`). Each part's
docstring opens with what it is for, in a sentence, and refers here in a line.
"""
