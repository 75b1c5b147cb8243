"""docs/plugin-hooks.md documents every hook with its exact signature (as datasette does).

A hook section's heading is the signature as written in ``hermes_hookspecs/_hookspecs.py``:
``## name(param: annotation, ...) -> return``, with the annotations as their source text
(the module uses ``from __future__ import annotations``, so they are strings).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hermes_hookspecs
import pytest
from hermes_hookspecs import PROJECT_NAME, adapter_kit, hookspecs

DOCS = Path(__file__).resolve().parents[2] / "docs" / "plugin-hooks.md"
SIGNATURE_HEADING = re.compile(r"^## (?P<name>\w+)\((?P<rest>.*)$")


def hook_specs() -> dict[str, Callable[..., Any]]:
    """Every function of the contract module marked with ``@hookspec``."""
    marker = f"{PROJECT_NAME}_spec"
    return {
        name: function
        for name, function in vars(hookspecs).items()
        if callable(function) and hasattr(function, marker)
    }


def rendered_signature(function: Callable[..., Any]) -> str:
    """The canonical heading text: the annotations' source strings, no quotes."""
    signature = inspect.signature(function)  # string annotations stay strings
    parameters = ", ".join(
        f"{parameter.name}: {parameter.annotation}" for parameter in signature.parameters.values()
    )
    return f"{function.__name__}({parameters}) -> {signature.return_annotation}"


def documented_sections(path: Path = DOCS) -> dict[str, tuple[str, str]]:
    """Hook name → (heading text, section body) for every ``## name(...)`` heading."""
    sections: dict[str, tuple[str, str]] = {}
    current: str | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            match = SIGNATURE_HEADING.match(line)
            current = match["name"] if match else None
            if current is not None:
                assert current not in sections, f"{current} is documented twice"
                sections[current] = (line[3:].strip(), "")
        elif current is not None:
            heading, body = sections[current]
            sections[current] = (heading, body + line + "\n")
    return sections


def expected_kind(function: Callable[..., Any]) -> str:
    spec_options = getattr(function, f"{PROJECT_NAME}_spec")
    if spec_options.get("firstresult"):
        return "firstresult"
    if "register" in inspect.signature(function).parameters:
        return "callback"
    return "fan-out"


def test_the_signature_rendering_is_the_source_text() -> None:
    # Guards the rendering itself: a heading is compared with exactly this form.
    assert rendered_signature(hookspecs.hermes_register_sources) == (
        "hermes_register_sources(register: Callable[[SessionSource], None]) -> None"
    )


def test_the_contract_has_hooks() -> None:
    assert len(hook_specs()) >= 10


def test_every_hook_is_documented() -> None:
    missing = sorted(set(hook_specs()) - set(documented_sections()))
    assert not missing, f"hooks missing from {DOCS.name}: {missing}"


def test_every_documented_hook_exists() -> None:
    stale = sorted(set(documented_sections()) - set(hook_specs()))
    assert not stale, f"{DOCS.name} documents hooks that no longer exist: {stale}"


@pytest.mark.parametrize("name", sorted(hook_specs()))
def test_documented_signature_matches_the_hookspec(name: str) -> None:
    sections = documented_sections()
    if name not in sections:
        pytest.fail(f"{name} is not documented")
    heading, _ = sections[name]
    assert heading == rendered_signature(hook_specs()[name])


@pytest.mark.parametrize("name", sorted(hook_specs()))
def test_documented_section_states_kind_parameters_and_an_example(name: str) -> None:
    sections = documented_sections()
    if name not in sections:
        pytest.fail(f"{name} is not documented")
    _, body = sections[name]
    function = hook_specs()[name]
    assert f"**Kind:** {expected_kind(function)}." in body
    for parameter in inspect.signature(function).parameters:
        assert f"- `{parameter}`" in body, f"parameter {parameter} of {name} is not described"
    assert "**Called**" in body and "**Returns**" in body
    examples = re.findall(r"```python\n(.*?)```", body, flags=re.DOTALL)
    assert any(f"def {name}(" in example for example in examples), f"{name} has no example"


def test_every_python_example_compiles() -> None:
    text = DOCS.read_text(encoding="utf-8")
    examples = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert examples
    for number, example in enumerate(examples, 1):
        compile(example, f"{DOCS.name} example {number}", "exec")


@pytest.mark.parametrize("name", sorted(hook_specs()))
def test_every_hookspec_has_a_docstring(name: str) -> None:
    docstring = inspect.getdoc(hook_specs()[name])
    assert docstring and docstring.strip(), f"{name} has no docstring"


@pytest.mark.parametrize("public_name", sorted(hermes_hookspecs.__all__))
def test_every_public_name_of_the_contract_is_mentioned(public_name: str) -> None:
    assert f"`{public_name}`" in DOCS.read_text(encoding="utf-8")


@pytest.mark.parametrize("public_name", sorted(adapter_kit.__all__))
def test_every_name_of_the_adapter_kit_is_mentioned(public_name: str) -> None:
    assert f"`{public_name}`" in DOCS.read_text(encoding="utf-8")


def test_the_heading_parser_sees_a_drifted_signature(tmp_path: Path) -> None:
    # The checks above are only as good as the parser: feed it a drifted copy.
    drifted = DOCS.read_text(encoding="utf-8").replace(
        "## hermes_session_ended(session: Session, reason: str) -> None",
        "## hermes_session_ended(session: Session) -> None",
    )
    copy = tmp_path / "plugin-hooks.md"
    copy.write_text(drifted, encoding="utf-8")
    heading, _ = documented_sections(copy)["hermes_session_ended"]
    assert heading != rendered_signature(hookspecs.hermes_session_ended)
