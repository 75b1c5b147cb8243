"""Plugin loading and the typed facade over the hooks (DESIGN §2).

stevedore discovers the entry points of group ``hermes``; pluggy registers and calls them.
The rest of the core never calls ``pm.hook.…`` directly: it asks :class:`PluginHost` typed
questions (``sources()``, ``exporter("html")``…).

A plugin that fails to import, implements a hook this core does not know, or raises while
registering is unregistered and reported (one stderr line, and ``hermes plugins``); the host
and the other plugins go on. ``HERMES_STRICT_PLUGINS=1`` re-raises instead (for plugin
authors); ``HERMES_PLUGINS=a,b`` loads only those distributions (``''`` loads none).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pluggy
from hermes_hookspecs import (
    PROJECT_NAME,
    Exporter,
    Importer,
    Message,
    ModelProvider,
    ModelSettings,
    PlatformAdapter,
    RedactionRule,
    Session,
    SessionSource,
    StoreBackend,
    hookspecs,
)

from hermes_core.terminal_text import terminal_safe

CORE_DISTRIBUTION = "hermes-sessions"
ENTRY_POINT_GROUP = PROJECT_NAME
BUILTIN_PLUGINS = (
    "hermes_core.builtins.sources",
    "hermes_core.builtins.model_titles",
    "hermes_core.builtins.titles",
    "hermes_core.builtins.store_sqlite",
    "hermes_core.builtins.batch",
)
"""The core's own plugins, in registration order. A module that defines ``plugin_for(host)``
is registered as the object that function returns (for built-ins that need the host)."""
KNOWN_HOOKS = frozenset(name for name in dir(hookspecs) if name.startswith("hermes_"))

# Where a missing component can be had, for a helpful error.
COMPONENT_DISTRIBUTIONS = {
    ("exporter", "jsonl"): "hermes-export-jsonl",
    ("importer", "jsonl"): "hermes-export-jsonl",
    ("exporter", "md"): "hermes-export-markdown",
    ("exporter", "qmd"): "hermes-export-markdown",
    ("exporter", "html"): "hermes-export-html",
    ("exporter", "trace"): "hermes-export-trace",
    ("importer", "claude"): "hermes-import-claude",
    ("importer", "codex"): "hermes-import-codex",
    ("importer", "hermes-agent"): "hermes-import-hermes-agent",
    ("model provider", "openai"): "hermes-model-openai",
    ("store backend", "postgresql"): "hermes-store-postgres",
    ("platform", "matrix"): "hermes-platform-matrix",
    ("store backend", "postgres"): "hermes-store-postgres",
    ("platform", "webhook"): "hermes-gateway-webhook",
    ("platform", "api-server"): "hermes-gateway-api-server",
    ("platform", "telegram"): "hermes-platform-telegram",
    ("platform", "slack"): "hermes-platform-slack",
    ("platform", "discord"): "hermes-platform-discord",
    ("platform", "email"): "hermes-platform-email",
    ("platform", "homeassistant"): "hermes-platform-homeassistant",
    ("platform", "qqbot"): "hermes-platform-qqbot",
    ("platform", "mattermost"): "hermes-platform-mattermost",
    ("platform", "bluebubbles"): "hermes-platform-bluebubbles",
    ("platform", "whatsapp"): "hermes-platform-whatsapp",
    ("platform", "signal"): "hermes-platform-signal",
    ("platform", "feishu"): "hermes-platform-feishu",
    ("platform", "dingtalk"): "hermes-platform-dingtalk",
    ("platform", "sms"): "hermes-platform-sms",
    ("platform", "wecom"): "hermes-platform-wecom",
    ("platform", "weixin"): "hermes-platform-weixin",
}

STORE_BACKEND_ENTRY_POINTS = {"postgresql": "postgres", "postgres": "postgres"}
"""The entry point (group ``hermes``) whose plugin registers each known store scheme; any
other scheme is looked for under an entry point of its own name (see :func:`store_backend`)."""

T = TypeVar("T")


class PluginError(Exception):
    """A plugin could not be used (strict mode re-raises these)."""


class DuplicateComponent(PluginError):
    """Two plugins registered a component under the same name."""


class MissingComponent(LookupError):
    """No installed plugin provides the requested component."""


@dataclass
class PluginRecord:
    """What ``hermes plugins`` shows about one plugin."""

    name: str
    distribution: str
    version: str | None = None
    hooks: list[str] = field(default_factory=list)
    components: list[str] = field(default_factory=list)
    error: str | None = None
    builtin: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "hooks": sorted(self.hooks),
            "components": sorted(self.components),
            "error": self.error,
            "builtin": self.builtin,
        }


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def _normalise(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(".", "-")


class PluginHost:
    """Owns the pluggy ``PluginManager`` and the name-keyed component registries."""

    def __init__(
        self,
        *,
        load_entry_points: bool = True,
        extra_plugins: Iterable[tuple[str, object]] = (),
        report: Callable[[str], None] | None = None,
    ) -> None:
        self.pm = pluggy.PluginManager(PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self.strict = _env_flag("HERMES_STRICT_PLUGINS")
        self._report = report or (lambda line: print(terminal_safe(line), file=sys.stderr))
        self.records: dict[str, PluginRecord] = {}
        self._registries: dict[str, dict[str, tuple[Any, str]]] = {}
        self._registry_errors: dict[str, DuplicateComponent] = {}
        self._model: tuple[ModelProvider, ModelSettings] | None = None
        for module_name in BUILTIN_PLUGINS:
            module = __import__(module_name, fromlist=["_"])
            factory = getattr(module, "plugin_for", None)
            plugin = factory(self) if callable(factory) else module
            self._register(module_name.rsplit(".", 1)[-1], plugin, CORE_DISTRIBUTION, builtin=True)
        for name, plugin in extra_plugins:
            self._register(name, plugin, "(in-process)")
        if load_entry_points:
            self._load_entry_points()

    # ------------------------------------------------------------------ loading

    def _load_entry_points(self) -> None:
        from stevedore import ExtensionManager, NamedExtensionManager

        selection = os.environ.get("HERMES_PLUGINS")
        failures: list[tuple[str, str, BaseException]] = []

        def on_failure(_manager: Any, entry_point: Any, error: BaseException) -> None:
            failures.append((entry_point.name, entry_point.value, error))

        manager: Any
        if selection is None:
            manager = ExtensionManager(ENTRY_POINT_GROUP, on_load_failure_callback=on_failure)
        else:
            wanted = {_normalise(part) for part in selection.split(",") if part.strip()}
            names = [
                entry_point_name
                for (entry_point_name, _), distribution in _entry_point_distributions().items()
                if _normalise(entry_point_name) in wanted or _normalise(distribution) in wanted
            ]
            manager = NamedExtensionManager(
                ENTRY_POINT_GROUP, names=names, on_load_failure_callback=on_failure
            )
        for entry_point_name, target, error in failures:
            distribution = _distribution_of(entry_point_name, target)
            self._fail(
                self._free_name(entry_point_name, distribution),
                distribution,
                error,
                "failed to import",
            )
        for extension in manager:
            distribution = _distribution_of(extension.name, extension.entry_point.value)
            self._register(
                self._free_name(extension.name, distribution), extension.plugin, distribution
            )

    def _free_name(self, entry_point_name: str, distribution: str) -> str:
        """The plugin's name: its entry-point name, qualified by its distribution when a
        built-in or another distribution already uses that name."""
        if entry_point_name in self.records:
            return f"{entry_point_name}@{distribution}"
        return entry_point_name

    def _register(
        self, name: str, plugin: object, distribution: str, *, builtin: bool = False
    ) -> None:
        record = PluginRecord(name=name, distribution=distribution, builtin=builtin)
        self.records[name] = record
        implemented = _implemented_hooks(plugin)
        record.hooks = sorted(implemented)
        unknown = sorted(implemented - KNOWN_HOOKS)
        if unknown:
            error = PluginError(
                f"implements hook(s) this version of hermes does not know: {', '.join(unknown)}"
            )
            self._fail(name, distribution, error, "not loaded")
            return
        try:
            self.pm.register(plugin, name=name)
        except Exception as error:
            self._fail(name, distribution, error, "not loaded")

    def _fail(self, name: str, distribution: str, error: BaseException, what: str) -> None:
        record = self.records.setdefault(name, PluginRecord(name=name, distribution=distribution))
        record.error = f"{type(error).__name__}: {error}"
        if self.strict:
            raise PluginError(f"plugin '{name}' ({distribution}) {what}: {record.error}") from error
        if self.pm.has_plugin(name):
            self.pm.unregister(name=name)
        self._report(
            f"hermes: plugin '{name}' ({distribution}) {what}: {record.error} — see 'hermes plugins'"
        )

    # ------------------------------------------------------------------ registries

    def _registry(self, kind: str, hook_name: str) -> dict[str, tuple[Any, str]]:
        """Components of ``kind`` by name, each with the plugin that registered it. Each
        implementation is called on its own so every component is attributed to its plugin."""
        if kind in self._registries:
            return self._registries[kind]
        if kind in self._registry_errors:
            raise self._registry_errors[kind]
        registry: dict[str, tuple[Any, str]] = {}
        hook_caller = getattr(self.pm.hook, hook_name)
        for implementation in reversed(hook_caller.get_hookimpls()):
            plugin_name = implementation.plugin_name

            def register(component: Any, _plugin: str = plugin_name) -> None:
                # Store backends are known by their URL scheme, everything else by name.
                component_name = str(getattr(component, "name", None) or component.scheme)
                if component_name in registry:
                    other = registry[component_name][1]
                    raise DuplicateComponent(
                        f"two plugins register the {kind} '{component_name}': "
                        f"{self.records[other].distribution} (plugin '{other}') and "
                        f"{self.records[_plugin].distribution} (plugin '{_plugin}')"
                    )
                registry[component_name] = (component, _plugin)
                self.records[_plugin].components.append(f"{kind}:{component_name}")

            try:
                implementation.function(**{arg: register for arg in implementation.argnames})
            except DuplicateComponent as error:
                self._registry_errors[kind] = error
                raise
            except Exception as error:
                # Nothing of a plugin that failed half-way through registering stays behind.
                for name in [n for n, (_, owner) in registry.items() if owner == plugin_name]:
                    del registry[name]
                record = self.records[plugin_name]
                record.components = [c for c in record.components if not c.startswith(f"{kind}:")]
                self._fail(
                    plugin_name, self.records[plugin_name].distribution, error, "failed to register"
                )
        self._registries[kind] = registry
        return registry

    def sources(self) -> dict[str, SessionSource]:
        """Every registered session origin by name (SPEC O1), platforms included."""
        found = {
            name: item
            for name, (item, _) in self._registry("source", "hermes_register_sources").items()
        }
        for name, adapter in self.platforms().items():
            found.setdefault(name, adapter)
        return found

    def short_label(self, source_name: str) -> str:
        """The short label of an origin; an origin whose plugin is gone shows its raw name."""
        source = self.sources().get(source_name)
        return source.short_label if source is not None else source_name

    def exporters(self) -> dict[str, Exporter]:
        return self._components("exporter", "hermes_register_exporters")

    def importers(self) -> dict[str, Importer]:
        return self._components("importer", "hermes_register_importers")

    def platforms(self) -> dict[str, PlatformAdapter]:
        return self._components("platform", "hermes_register_platforms")

    def model_providers(self) -> dict[str, ModelProvider]:
        """Every registered way to call a model, by ``model.provider`` name."""
        return self._components("model provider", "hermes_register_model_providers")

    def model_provider(self, name: str) -> ModelProvider:
        return self._one("model provider", name, self.model_providers())

    def store_backends(self) -> dict[str, StoreBackend]:
        """Every registered store backend by URL scheme (``sqlite`` is the built-in one)."""
        return self._components("store backend", "hermes_register_store_backends")

    def use_model(self, provider: ModelProvider, settings: ModelSettings) -> None:
        """Make ``provider`` with ``settings`` the model this host's own features use (the
        automatic-title plugin); set when a chat or the gateway opens its provider."""
        self._model = (provider, settings)

    def active_model(self) -> tuple[ModelProvider, ModelSettings] | None:
        """The model set by :meth:`use_model`, or None when nothing opened one."""
        return self._model

    def redaction_rules(self) -> list[RedactionRule]:
        return list(self._components("redaction rule", "hermes_register_redaction_rules").values())

    def exporter(self, name: str) -> Exporter:
        return self._one("exporter", name, self.exporters())

    def importer(self, name: str) -> Importer:
        return self._one("importer", name, self.importers())

    def _components(self, kind: str, hook_name: str) -> dict[str, Any]:
        return {name: item for name, (item, _) in self._registry(kind, hook_name).items()}

    @staticmethod
    def _one(kind: str, name: str, available: Mapping[str, T]) -> T:
        if name in available:
            return available[name]
        hint = COMPONENT_DISTRIBUTIONS.get((kind, name))
        if hint:
            raise MissingComponent(f"no {kind} '{name}' is installed (pip install {hint})")
        known = ", ".join(sorted(available)) or "none installed"
        raise MissingComponent(f"no {kind} '{name}' (available: {known})")

    def register_commands(self, app: Any) -> None:
        """Let plugins add sub-commands to the root typer app."""
        for implementation in self.pm.hook.hermes_register_commands.get_hookimpls():
            try:
                implementation.function(**{arg: app for arg in implementation.argnames})
            except Exception as error:
                plugin = implementation.plugin_name
                self._fail(
                    plugin, self.records[plugin].distribution, error, "failed to add commands"
                )

    def describe(self, *, include_builtin: bool = False) -> list[PluginRecord]:
        """Records for ``hermes plugins``, with versions and components filled in."""
        for kind, hook in (
            ("source", "hermes_register_sources"),
            ("exporter", "hermes_register_exporters"),
            ("importer", "hermes_register_importers"),
            ("platform", "hermes_register_platforms"),
            ("redaction rule", "hermes_register_redaction_rules"),
            ("model provider", "hermes_register_model_providers"),
            ("store backend", "hermes_register_store_backends"),
        ):
            try:
                self._registry(kind, hook)
            except DuplicateComponent as error:
                self._report(f"hermes: {error}")
        records = [r for r in self.records.values() if include_builtin or not r.builtin]
        for record in records:
            record.version = _distribution_version(record.distribution)
        return sorted(records, key=lambda r: (r.builtin, r.name))

    # ------------------------------------------------------------------ SessionEvents

    def session_started(self, session: Session) -> None:
        self._notify("hermes_session_started", session=session)

    def session_ended(self, session: Session, reason: str) -> None:
        self._notify("hermes_session_ended", session=session, reason=reason)

    def session_before_reset(self, session: Session, messages: Sequence[Message]) -> None:
        self._notify("hermes_session_before_reset", session=session, messages=messages)

    def generate_title(self, session: Session, messages: Sequence[Message]) -> str | None:
        result: str | None = self.pm.hook.hermes_generate_title(session=session, messages=messages)
        return result

    def _notify(self, hook_name: str, **kwargs: Any) -> None:
        for implementation in getattr(self.pm.hook, hook_name).get_hookimpls():
            try:
                implementation.function(**{a: kwargs[a] for a in implementation.argnames})
            except Exception as error:
                plugin = implementation.plugin_name
                self._report(f"hermes: plugin '{plugin}' failed in {hook_name}: {error}")


def _implemented_hooks(plugin: object) -> set[str]:
    marker = f"{PROJECT_NAME}_impl"
    names = set()
    for attribute in dir(plugin):
        try:
            value = getattr(plugin, attribute)
        except Exception:
            continue
        if callable(value) and hasattr(value, marker):
            names.add(attribute)
    return names


_DISTRIBUTIONS: dict[tuple[str, str], str] | None = None


def _entry_point_distributions() -> dict[tuple[str, str], str]:
    """(entry-point name, target) → distribution name. Read only when needed: it scans the
    installed metadata, which stevedore's cache otherwise spares us."""
    global _DISTRIBUTIONS
    if _DISTRIBUTIONS is None:
        import importlib_metadata

        _DISTRIBUTIONS = {}
        for entry_point in importlib_metadata.entry_points(group=ENTRY_POINT_GROUP):
            dist = entry_point.dist
            name = dist.name if dist else "(unknown distribution)"
            _DISTRIBUTIONS.setdefault((entry_point.name, entry_point.value), name)
    return _DISTRIBUTIONS


def _distribution_of(entry_point_name: str, target: str) -> str:
    return _entry_point_distributions().get((entry_point_name, target), "(unknown distribution)")


def _distribution_version(distribution: str) -> str | None:
    import importlib_metadata

    try:
        return str(importlib_metadata.version(distribution))
    except importlib_metadata.PackageNotFoundError:
        return None


# ---------------------------------------------------------------------- one store backend alone


def store_backend(scheme: str) -> StoreBackend | None:
    """The store backend for URL ``scheme``, or None when no installed plugin registers it.

    A command that only opens the store needs one plugin, not all of them: the plugin of the
    entry point :data:`STORE_BACKEND_ENTRY_POINTS` names for the scheme (else one named like
    the scheme) is found in the installed metadata, imported and asked alone. Start-up time is
    a budget, and loading every plugin (stevedore, ``importlib.metadata`` and some thirty
    modules) cost a PostgreSQL command ~40–50 ms the SQLite path never pays. Whenever that
    does not give the backend — no such entry point, ``HERMES_PLUGINS`` set, a plugin that
    fails to import or register, implements a hook this core does not know, or registers
    other schemes only — every plugin is loaded as usual (:class:`PluginHost`), which reports
    what is wrong as it always did. Two plugins claiming one scheme are found by commands
    that load every plugin (``hermes plugins``), not by this lookup."""
    if os.environ.get("HERMES_PLUGINS") is None:
        found = _backend_of_entry_point(scheme, STORE_BACKEND_ENTRY_POINTS.get(scheme, scheme))
        if found is not None:
            return found
    return PluginHost().store_backends().get(scheme)


def _backend_of_entry_point(scheme: str, entry_point_name: str) -> StoreBackend | None:
    target = _entry_point_target(ENTRY_POINT_GROUP, entry_point_name)
    if target is None:
        return None
    found: dict[str, StoreBackend] = {}

    def register(backend: StoreBackend) -> None:
        found.setdefault(str(backend.scheme), backend)

    try:
        plugin = _load_target(target)
        if _implemented_hooks(plugin) - KNOWN_HOOKS:
            return None
        hook = getattr(plugin, "hermes_register_store_backends", None)
        if hook is None or not hasattr(hook, f"{PROJECT_NAME}_impl"):
            return None
        hook(register=register)
    except Exception:
        return None  # PluginHost loads it again and reports the failure
    return found.get(scheme)


def _entry_point_target(group: str, name: str) -> str | None:
    """The target (``module`` or ``module:attribute``) of the first entry point ``name`` of
    ``group`` in the ``*.dist-info/entry_points.txt`` files on ``sys.path``, read directly:
    ``importlib.metadata`` costs more to import than this costs to read them all."""
    for folder in sys.path:
        try:
            entries = os.scandir(folder or ".")
        except OSError:
            continue
        with entries:
            for entry in entries:
                if not entry.name.endswith(".dist-info"):
                    continue
                try:
                    with open(os.path.join(entry.path, "entry_points.txt"), encoding="utf-8") as f:
                        text = f.read()
                except (OSError, UnicodeDecodeError):
                    continue
                target = _entry_point_in(text, group, name)
                if target is not None:
                    return target
    return None


def _entry_point_in(text: str, group: str, name: str) -> str | None:
    """``name``'s target in the ``[group]`` section of an ``entry_points.txt``."""
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section == group and "=" in line and not line.startswith(("#", ";")):
            key, _, value = line.partition("=")
            if key.strip() == name:
                return value.split("[", 1)[0].strip()  # "module:attr [extra]"
    return None


def _load_target(target: str) -> object:
    """What an entry point's ``module:attribute.path`` names."""
    from importlib import import_module

    module_name, _, attributes = target.partition(":")
    loaded: object = import_module(module_name.strip())
    for attribute in filter(None, attributes.strip().split(".")):
        loaded = getattr(loaded, attribute)
    return loaded
