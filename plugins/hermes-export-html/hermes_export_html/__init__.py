"""Export sessions as one self-contained HTML file (exporter ``html``).

The page has no remote resource, a Content-Security-Policy with a per-export nonce, every
piece of session text escaped and rendered server-side, chat bubbles per role, collapsible
tool calls and output, a searchable sidebar for multi-session exports, and light/dark themes.

The renderer is public for other hosts of the same pages (``hermes serve``):
:func:`render_message`, :func:`render_session_head`, :func:`text` (the one escaping),
:func:`content_security_policy`, :func:`new_nonce` and :func:`asset` (``page.css``).
"""

from .exporter import HtmlExporter
from .page import asset, content_security_policy, new_nonce
from .render import iso_time, render_message, render_session_head, session_label, text

__all__ = [
    "HtmlExporter",
    "asset",
    "content_security_policy",
    "iso_time",
    "new_nonce",
    "render_message",
    "render_session_head",
    "session_label",
    "text",
]
