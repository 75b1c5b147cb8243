"""The agent's turn engine (DESIGN §8): history → model → tool calls → store.

The chat and the gateway both run conversations through :class:`TurnEngine`; neither writes
messages any other way. Nothing here touches a terminal or the network directly: the model is
reached through a provider plugin (``open_provider``).
"""

from __future__ import annotations

from .compression import COMPRESSION_PROMPT
from .engine import INTERRUPTED_MARK, MAX_TOOL_ROUNDS, TurnEngine
from .listener import TurnListener, TurnResult
from .settings import (
    ModelProviderUnavailable,
    NoModelConfigured,
    load_model_settings,
    open_provider,
)
from .tools import Tool, Toolbox

__all__ = [
    "COMPRESSION_PROMPT",
    "INTERRUPTED_MARK",
    "MAX_TOOL_ROUNDS",
    "ModelProviderUnavailable",
    "NoModelConfigured",
    "Tool",
    "Toolbox",
    "TurnEngine",
    "TurnListener",
    "TurnResult",
    "load_model_settings",
    "open_provider",
]
