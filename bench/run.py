"""Entry point: ``uv run python bench/run.py [--quick] [--messages 100000,1000000]
[--only a,b,c,d] [--workdir DIR]``. See ``bench/README.md``."""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from bench.figures import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
