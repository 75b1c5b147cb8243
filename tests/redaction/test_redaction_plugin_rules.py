"""A plugin's rule, registered through ``hermes_register_redaction_rules``, reaches
``Redactor.from_host`` — in-process, and through a real entry point in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
from hermes_hookspecs import RedactionRule, hookimpl
from plugin_folders import write_dist_info

from hermes_core.plugins import DuplicateComponent, PluginHost
from hermes_core.redaction import BUILTIN_RULES, Redactor

ACME_SECRET = "acme_4f8a9c2b7d1e6f30"


def acme_plugin() -> SimpleNamespace:
    @hookimpl
    def hermes_register_redaction_rules(register):  # type: ignore[no-untyped-def]
        register(
            RedactionRule(
                name="acme-token",
                pattern=r"acme_[0-9a-f]{16}",
                keywords=("acme_",),
                replacement="[REDACTED:acme-token]",
            )
        )

    return SimpleNamespace(hermes_register_redaction_rules=hermes_register_redaction_rules)


def host_with(*plugins: tuple[str, object]) -> tuple[PluginHost, list[str]]:
    reports: list[str] = []
    host = PluginHost(load_entry_points=False, extra_plugins=plugins, report=reports.append)
    return host, reports


def test_a_plugin_rule_reaches_the_redactor() -> None:
    host, reports = host_with(("acme", acme_plugin()))
    redactor = Redactor.from_host(host)
    assert [rule.name for rule in redactor.rules[: len(BUILTIN_RULES)]] == [
        rule.name for rule in BUILTIN_RULES
    ]
    assert redactor.rules[-1].name == "acme-token"
    assert redactor.redact_text(f"key {ACME_SECRET} end") == "key [REDACTED:acme-token] end"
    assert redactor.counts == {"acme-token": 1}
    assert reports == []


def test_without_the_plugin_the_private_format_is_not_known() -> None:
    host, _ = host_with()
    assert Redactor.from_host(host).redact_text(f"key {ACME_SECRET}") == f"key {ACME_SECRET}"


def test_two_plugins_registering_the_same_rule_name_is_an_error_naming_both() -> None:
    host, _ = host_with(("acme", acme_plugin()), ("acme-copy", acme_plugin()))
    with pytest.raises(DuplicateComponent, match="acme-token"):
        Redactor.from_host(host)


PLUGIN_MODULE = """
    from hermes_hookspecs import RedactionRule, hookimpl

    @hookimpl
    def hermes_register_redaction_rules(register):
        register(RedactionRule(name="acme-token", pattern=r"acme_[0-9a-f]{16}",
                               keywords=("acme_",), replacement="[REDACTED:acme-token]"))
"""
SCRIPT = """
import json, sys
from hermes_core.plugins import PluginHost
from hermes_core.redaction import Redactor
redactor = Redactor.from_host(PluginHost())
text = redactor.redact_text(sys.argv[1])
print(json.dumps({"text": text, "counts": dict(redactor.counts)}))
"""


def test_an_installed_plugin_rule_is_loaded_through_its_entry_point(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "acme_redaction.py").write_text(textwrap.dedent(PLUGIN_MODULE), encoding="utf-8")
    write_dist_info(site, "acme-redaction", "1.0.0", {"hermes": {"acme": "acme_redaction"}})
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        PYTHONPATH=str(site),
        HERMES_STRICT_PLUGINS="1",
    )
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, f"deploy with {ACME_SECRET} and ghp_{'a1' * 18}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["text"] == "deploy with [REDACTED:acme-token] and [REDACTED:github-token]"
    assert found["counts"] == {"acme-token": 1, "github-token": 1}
