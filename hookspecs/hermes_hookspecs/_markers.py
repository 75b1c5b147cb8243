"""The pluggy markers of the project ``hermes``.

Plugins decorate their hook implementations with :data:`hookimpl`; the contract in
:mod:`hermes_hookspecs._hookspecs` is declared with :data:`hookspec`.
"""

from __future__ import annotations

import pluggy

PROJECT_NAME = "hermes"
"""The pluggy project name, and the entry-point group plugins register in."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
