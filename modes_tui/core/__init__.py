"""The headless domain: profiles, prompts, conversation, routing, engine, tools, events.

Nothing in this package imports textual, prompt_toolkit, litellm, llama_cpp, torch or
sentence_transformers; `tests/test_import_hygiene.py` keeps it that way.
"""
