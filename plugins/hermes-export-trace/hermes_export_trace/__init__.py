"""Export sessions as Claude Code JSONL traces, optionally uploaded to the Hugging Face Hub.

The exporter ``trace`` redacts secrets by default and, with ``--upload``, pushes the traces to
the user's private dataset ``<user>/hermes-traces`` (``HF_TOKEN``; ``--public`` to publish).
"""

from .exporter import TraceExporter
from .upload import TraceUploadError

__all__ = ["TraceExporter", "TraceUploadError"]
