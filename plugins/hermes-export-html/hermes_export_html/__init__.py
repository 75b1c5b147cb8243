"""Export sessions as one self-contained HTML file (exporter ``html``).

The page has no remote resource, a Content-Security-Policy with a per-export nonce, every
piece of session text escaped and rendered server-side, chat bubbles per role, collapsible
tool calls and output, a searchable sidebar for multi-session exports, and light/dark themes.
"""

from .exporter import HtmlExporter

__all__ = ["HtmlExporter"]
