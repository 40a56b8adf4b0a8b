"""How a mode runs this turn: its model, thinking, tools and system prompt, resolved.

`ModeSetups.resolve` turns a mode's profile into a `TurnSetup` (asking the chat model what
each model can do, once); a fallback resolves the same mode again with the next model.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging

from modes_tui.core.engine.config import EngineConfig
from modes_tui.core.engine.state import TurnSetup
from modes_tui.core.model.ports import UNKNOWN_CAPABILITIES, ChatModel, ModelCapabilities
from modes_tui.core.packs.fields import HistoryWindow
from modes_tui.core.packs.profiles import Pack, Profile
from modes_tui.core.packs.prompts import template_locals
from modes_tui.core.tools.ports import ToolServers
from modes_tui.core.tools.registry import Tool, ToolRegistry
from modes_tui.core.tools.servers import server_tools

__all__ = ["ModeSetups"]

log = logging.getLogger("modes_tui.engine")


class ModeSetups:
    """Resolves modes into `TurnSetup`s; keeps what models can do and rendered prompts."""

    def __init__(
        self, pack: Pack, model: ChatModel, tools: ToolRegistry, servers: ToolServers | None
    ) -> None:
        self.pack = pack
        self.model = model
        self.tools = tools
        self.servers = servers
        self._capabilities: dict[str, ModelCapabilities] = {}
        self._prompts: dict[tuple[str | None, str], str] = {}

    async def resolve(
        self,
        config: EngineConfig,
        mode: str | None,
        *,
        model: str | None = None,
        rest: tuple[str, ...] | None = None,
    ) -> TurnSetup:
        """How `mode` runs; `model` and `rest` replace its model and fallbacks (a fallback)."""
        profile = self.pack.get(mode) if mode is not None else None
        choice = config.choose(profile, model)  # a role or `default` -> an alias or an id
        model = choice.name
        if rest is None:
            # --model pins one model for the run: no mode's fallbacks apply
            rest = () if config.model_override or profile is None else profile.fallback_models
        notes: list[str] = []
        effort = await self._effort(profile, model, notes)
        tools = await self._tools(profile, model, notes)
        return TurnSetup(
            mode=mode,
            model=model,
            thinking=effort or "off",
            reasoning_effort=effort,
            tools=tools,
            specs=tuple(item.spec for item in tools.values()),
            system=self.system_prompt(config, profile),
            window=profile.history if profile is not None else HistoryWindow(20),
            temperature=profile.temperature if profile is not None else None,
            max_tokens=profile.max_tokens if profile is not None else None,
            notes=tuple(notes),
            fallbacks=tuple(rest),
            role=choice.role,
        )

    async def _effort(self, profile: Profile | None, model: str, notes: list[str]) -> str | None:
        requested = profile.thinking if profile is not None else "off"
        if requested == "off":
            return None
        if (await self.capable(model)).reasoning:
            return requested
        notes.append(f"thinking n/a for {model}")
        return None

    async def _tools(
        self, profile: Profile | None, model: str, notes: list[str]
    ) -> dict[str, Tool]:
        if profile is None or not (profile.tools or profile.mcp):
            return {}
        missing = [name for name in profile.tools if name not in self.tools]
        if missing:
            notes.append(f"tools not available here: {', '.join(missing)}")
        selected = self.tools.select(profile.tools)
        if (selected or profile.mcp) and not (await self.capable(model)).tools:
            notes.append(f"tools n/a for {model}")
            return {}
        # MCP servers start here, on the first turn of a mode that lists them
        found = await server_tools(profile.mcp, self.servers)
        notes.extend(found.problems)
        return {item.name: item for item in (*selected, *found.tools)}

    async def capable(self, model: str) -> ModelCapabilities:
        """What `model` can do, asked once (off the loop: it may import litellm)."""
        known = self._capabilities.get(model)
        if known is not None:
            return known
        try:
            answer = await asyncio.to_thread(self.model.capabilities, model)
        except Exception:  # an unknown capability is reported as missing
            log.exception("capabilities(%s) failed", model)
            answer = UNKNOWN_CAPABILITIES
        self._capabilities[model] = answer
        return answer

    def system_prompt(self, config: EngineConfig, profile: Profile | None) -> str:
        """The base prompt plus the mode's instructions, rendered once per mode and day."""
        today = dt.date.today()
        key = (profile.name if profile is not None else None, today.isoformat())
        text = self._prompts.get(key)
        if text is None:
            local = template_locals(profile, config.inputs, today=today, cwd=str(config.cwd))
            base = self.pack.prompts.render_system(local)
            extra = self.pack.prompts.render_instructions(profile, local) if profile else ""
            text = f"{base}\n\n{extra}" if extra else base
            self._prompts[key] = text
        return text
