"""Making plugin code an installed distribution for a test: a ``*.dist-info`` folder with its
``METADATA`` and ``entry_points.txt``, so the real ``hermes`` (or importlib.metadata) finds it
through entry points once the folder is on ``PYTHONPATH``."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def write_dist_info(
    site: Path, name: str, version: str, entry_points: Mapping[str, Mapping[str, str]]
) -> Path:
    """Write ``<name>-<version>.dist-info`` under ``site``; ``entry_points`` maps a group to
    its ``name = target`` lines. Returns the folder."""
    folder = site / f"{re.sub(r'[-_.]+', '_', name)}-{version}.dist-info"
    folder.mkdir(parents=True)
    (folder / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    groups = [
        f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in points.items())
        for group, points in entry_points.items()
    ]
    (folder / "entry_points.txt").write_text("\n".join(groups), encoding="utf-8")
    return folder


def register_distribution(root: Path) -> dict[str, Any]:
    """Write the dist-info for the project in ``root/pyproject.toml``; returns its table."""
    project: dict[str, Any] = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"
    ]
    write_dist_info(root, project["name"], project["version"], project["entry-points"])
    return project
