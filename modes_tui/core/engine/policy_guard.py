"""The policy guard: a mode's `permissions:` and `paths:` decide each tool call.

It stands where the confirmation guard stood (last, so nobody is asked about a call
another guard refuses) and does its work too:

    deny            blocked at once, nobody asked: a `permissions:` rule says deny, the path
                    is covered by `paths: deny:`, or a write goes outside `paths: write:`
    allow           runs without a question
    ask             the user is asked; for write_file / edit_file the question carries the
                    change (`Change`: its diff), planned now, and the tool later writes
                    exactly that change or nothing (`Editor.apply`)

A write the editor cannot plan (old_text matches nothing, a binary file) is refused with
the editor's own message before anyone is asked. Every decision but the shipped default's
allow (a read, as every call was before policies) goes to `record` with the rule that made
it and the user's answer; the engine writes it to the session as a `policy` ui_event.
Paths are decided on where they really are (`core.tools.resolver`: links inside followed,
a missing file's nearest existing folder resolved), so a link `notes -> .env` or `g -> .git`
is refused before anyone is asked; `paths: write:` looks at the real path only. The tools
check again on the descriptor they use (`core.tools.access`), so a swap after this look
changes nothing.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from modes_tui.core.edits.editor import EDIT_TOOL_NAMES, Change, Editor
from modes_tui.core.edits.policy import Permission, Policy
from modes_tui.core.engine.guards import DECLINED, NOBODY_TO_ASK
from modes_tui.core.engine.questions import RuleNote
from modes_tui.core.engine.verdicts import Block, Cancel, PendingCall, Verdict
from modes_tui.core.errors import ToolError
from modes_tui.core.tools.access import Refusal, check, denied_refusal
from modes_tui.core.tools.confined import ConfinedRoot, shown_path
from modes_tui.core.tools.resolver import Resolved, resolve

__all__ = [
    "PATH_TOOLS",
    "PolicyDecision",
    "PolicyGuard",
    "PreviewConfirmer",
    "RuleConfirmer",
    "decide",
]

log = logging.getLogger("modes_tui.guards")

PATH_TOOLS = frozenset({"read_file", "list_files", "search_files", "write_file", "edit_file"})
"""Built-in tools whose `path` argument the policy's `paths:` rules look at."""


class PreviewConfirmer(Protocol):
    """A `Confirmer` that can show the change a call would make."""

    async def confirm(self, call: Any, tool: Any, preview: Change | None = None) -> bool:
        """True to run the call."""
        ...


@runtime_checkable
class RuleConfirmer(Protocol):
    """A `Confirmer` that shows which rule asked, and says when a rule let a call run unasked
    (the app's dialog, the REPL's prompt and pipe); other confirmers get `confirm` only."""

    async def confirm_by_rule(
        self, call: Any, tool: Any, preview: Change | None, rule: RuleNote
    ) -> bool:
        """True to run the call `rule` asks about."""
        ...

    def allowed_by_rule(self, call: Any, rule: RuleNote) -> None:
        """`rule` (not the shipped default) lets the call run without a question."""
        ...


@dataclass(frozen=True, slots=True)
class PolicyDecision:
    """What the policy said about one call, and why."""

    tool: str
    """The tool called."""
    permission: Permission
    """allow, ask or deny."""
    source: str
    """The rule: `permissions.<key>`, `permissions.default`, `paths.deny`, `paths.write`,
    `paths.hard_links`, or `default` (the shipped default)."""
    reason: str = ""
    """For a deny: what the model reads."""
    path: str = ""
    """The path it looked at (real, under the working directory), if any."""

    def to_dict(self) -> dict[str, Any]:
        """For the session log's `policy` event."""
        return {
            "tool": self.tool,
            "permission": self.permission,
            "source": self.source,
            "reason": self.reason,
            "path": self.path,
        }


def decide(
    policy: Policy, tool: str, asks: bool, arguments: Mapping[str, Any], root: Path
) -> PolicyDecision:
    """The policy's decision on calling `tool` (`asks`: it asks by its nature) with
    `arguments` in the working directory `root`."""
    rule = policy.rule(tool, asks=asks)
    if rule.permission == "deny":
        reason = f"this mode may not use {tool} ({rule.source}: deny); do not retry it"
        return PolicyDecision(tool, "deny", rule.source, reason)
    if tool not in PATH_TOOLS or not isinstance(arguments.get("path", "."), str):
        return PolicyDecision(tool, rule.permission, rule.source)
    raw = str(arguments.get("path", "."))
    try:
        with ConfinedRoot(root) as confined:
            found = resolve(confined, raw)
            refusal = _refusal(policy, confined, found, writing=tool in EDIT_TOOL_NAMES)
    except ToolError:  # outside, a loop, a NUL: the tool (or the preview of a write, before
        # anyone is asked) refuses it with its own message
        lexical = posixpath.normpath(raw.strip() or ".")
        glob = policy.denied(lexical)
        if glob is not None:  # still: naming a denied path is refused before anyone is asked
            reason = denied_refusal(shown_path(lexical), glob).reason
            return PolicyDecision(tool, "deny", "paths.deny", reason, lexical)
        return PolicyDecision(tool, rule.permission, rule.source, "", raw)
    if refusal is not None:
        return PolicyDecision(tool, "deny", refusal.source, refusal.reason, found.real)
    return PolicyDecision(tool, rule.permission, rule.source, "", found.real)


def _refusal(
    policy: Policy, root: ConfinedRoot, found: Resolved, *, writing: bool
) -> Refusal | None:
    """The resolver's verdict on the REAL path (and the file there), before anyone is
    asked; the name as written is also held against `paths: deny:` (naming `.env` is
    asking for it, wherever it leads)."""
    glob = policy.denied(found.given)
    if glob is not None:
        return denied_refusal(shown_path(found.given), glob)
    return check(
        policy.file_rules(), root, found.real, found.status, writing=writing, given=found.given
    )


class PolicyGuard:
    """Decides every call by the current mode's policy; asks (with the diff) when it says so."""

    def __init__(
        self,
        policy: Callable[[str | None], Policy],
        root: Path,
        confirmer: PreviewConfirmer | None,
        *,
        editor: Editor | None = None,
        record: Callable[[PolicyDecision, bool | None], None] | None = None,
    ) -> None:
        self.policy = policy
        """The policy of a mode (None: no mode, the `off` setting)."""
        self.root = root
        self.confirmer = confirmer
        self.editor = editor
        """Plans write_file / edit_file changes for the question (None: asked without a diff)."""
        self.record = record
        """Gets each decision and the user's answer (None: nobody was asked)."""

    async def check(self, pending: PendingCall) -> Verdict | None:
        call, tool = pending.call, pending.tool
        policy = self.policy(pending.mode)
        if self.editor is not None:
            self.editor.policy = policy  # what a search that runs next may not read
        decision = decide(policy, call.name, tool.needs_confirmation, call.arguments, self.root)
        if decision.permission == "deny":
            self._note(decision, None)
            return Block(decision.reason, type="policy_denied")
        rule = RuleNote(pending.mode, call.name, decision.permission, decision.source)
        if decision.permission == "allow":
            self._note(decision, None)
            if decision.source != "default":
                self._tell_allowed(call, rule)
            return None
        try:
            preview = self._preview(call.name, call.arguments)
        except ToolError as error:
            self._note(decision, None)
            return Block(error.message, type="tool_error")
        allowed = await self._ask(pending, preview, rule)
        self._note(decision, allowed)
        if allowed:
            return None
        if self.editor is not None and preview is not None:
            self.editor.forget(call.name, call.arguments)
        return Cancel(DECLINED if self.confirmer is not None else NOBODY_TO_ASK)

    def _preview(self, name: str, arguments: Mapping[str, Any]) -> Change | None:
        if self.editor is None or name not in EDIT_TOOL_NAMES:
            return None
        return self.editor.preview(name, arguments)

    async def _ask(self, pending: PendingCall, preview: Change | None, rule: RuleNote) -> bool:
        if self.confirmer is None:
            return False
        try:
            if isinstance(self.confirmer, RuleConfirmer):  # the question names the rule
                return await self.confirmer.confirm_by_rule(
                    pending.call, pending.tool, preview, rule
                )
            if preview is None:
                return await self.confirmer.confirm(pending.call, pending.tool)
            return await self.confirmer.confirm(pending.call, pending.tool, preview=preview)
        except Exception:  # a broken dialog must not let the call run
            log.exception(
                "the confirmation of %s failed; treating it as declined", pending.call.name
            )
            return False

    def _tell_allowed(self, call: Any, rule: RuleNote) -> None:
        """Say that a rule, not the user, let the call run (the REPL prints it)."""
        if not isinstance(self.confirmer, RuleConfirmer):
            return
        try:
            self.confirmer.allowed_by_rule(call, rule)
        except Exception:  # saying so failed; the rule still decides
            log.exception("could not show the rule that allowed %s", call.name)

    def _note(self, decision: PolicyDecision, answer: bool | None) -> None:
        if self.record is None or (decision.permission, decision.source) == ("allow", "default"):
            return  # a read by the shipped default is what every call always was: not news
        try:
            self.record(decision, answer)
        except Exception:  # the log's trouble is reported by the engine; the call goes on
            log.exception("could not record the policy decision on %s", decision.tool)
