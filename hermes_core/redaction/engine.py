"""The redaction engine: apply the rule set to text and to nested values (SPEC K1).

Each rule is a regex with keywords. The keywords are a cheap pre-filter: a rule's regex runs
only on text that contains one of its keywords, compared case-insensitively (an empty tuple
means the regex always runs). So a rule whose keyword is absent never changes the text, even
where its pattern would match — keywords are part of a rule's meaning, not just a speed-up.

A rule's ``replacement`` is an :func:`re.sub` template: ``\\g<keep>`` puts a named group back
(the built-ins keep the key of an assignment or the scheme of a header that way).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import RedactionRule, SessionRecord

from .context_patterns import SECRET_KEY_WORDS
from .keywords import KeywordIndex
from .rules import BUILTIN_RULES, marker

if TYPE_CHECKING:
    from hermes_core.plugins import PluginHost

SECRET_KEY_NAME = re.compile(
    r"[A-Za-z0-9_.-]{0,60}(?:" + SECRET_KEY_WORDS + r"|(?i:authorization|api-key|cookie))"
)
"""A mapping key (in metadata or model configuration) whose value is a secret as a whole."""
KEYED_VALUE_RULE = "assignment"


OnRedaction = Callable[[str, "re.Match[str]"], None]
"""Called with the rule name and the match, for each secret found."""


class InvalidRedactionRule(ValueError):
    """A rule's pattern or replacement is not a valid regular expression."""


@dataclass(frozen=True, slots=True)
class _CompiledRule:
    name: str
    regex: re.Pattern[str]
    replacement: str
    keywords: tuple[str, ...]


def _compile(rule: RedactionRule) -> _CompiledRule:
    try:
        regex = re.compile(rule.pattern)
        # The template is parsed against the pattern's groups even on empty input, so a bad
        # ``\\g<name>`` fails here, when the rule set is built, not in the middle of an export.
        regex.sub(rule.replacement, "")
    except (re.error, IndexError) as error:
        raise InvalidRedactionRule(f"redaction rule '{rule.name}': {error}") from error
    return _CompiledRule(
        name=rule.name,
        regex=regex,
        replacement=rule.replacement,
        keywords=tuple(dict.fromkeys(keyword.lower() for keyword in rule.keywords)),
    )


def _reporting(rule: _CompiledRule, on_redaction: OnRedaction) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        on_redaction(rule.name, match)
        return match.expand(rule.replacement)

    return replace


class Redactor:
    """Removes secrets from text, nested values and whole session records.

    ``Redactor()`` uses the built-in rules; ``extra_rules`` are applied after them.
    :attr:`counts` adds up what was redacted, per rule name, over the redactor's life.
    """

    def __init__(self, extra_rules: Sequence[RedactionRule] = ()) -> None:
        self.rules: tuple[RedactionRule, ...] = (*BUILTIN_RULES, *extra_rules)
        self._compiled = tuple(_compile(rule) for rule in self.rules)
        self._keywords = KeywordIndex(k for rule in self._compiled for k in rule.keywords)
        self._counts: Counter[str] = Counter()

    @classmethod
    def from_host(cls, host: PluginHost) -> Redactor:
        """The built-in rules plus every rule plugins register through
        ``hermes_register_redaction_rules``."""
        return cls(host.redaction_rules())

    @property
    def counts(self) -> Mapping[str, int]:
        """Redactions made so far, per rule name (rules sharing a name add up)."""
        return dict(self._counts)

    @property
    def total(self) -> int:
        """Redactions made so far, all rules together."""
        return sum(self._counts.values())

    def redact_text(self, text: str, on_redaction: OnRedaction | None = None) -> str:
        """``text`` with every secret replaced by its rule's marker.

        ``on_redaction(rule_name, match)``, when given, is called for each secret found, with
        the match in the text as it stood when that rule ran (for reviews such as the bench's
        ``--verbose`` listing; slower, since every match then goes through Python).
        """
        if not text:
            return text
        # Keywords are looked for in the text as given, not after earlier substitutions: a
        # substitution only removes text and adds markers, which no rule matches, so this
        # stays a correct pre-filter (at worst a regex runs and finds nothing).
        present = self._keywords.present(text.lower())
        for rule in self._compiled:
            if rule.keywords and present.isdisjoint(rule.keywords):
                continue
            if on_redaction is None:
                text, found = rule.regex.subn(rule.replacement, text)
            else:
                text, found = rule.regex.subn(_reporting(rule, on_redaction), text)
            if found:
                self._counts[rule.name] += found
        return text

    def redact_value(self, value: Any) -> Any:
        """A copy of ``value`` with every string inside it redacted.

        Strings, and strings nested in dicts, lists and tuples, are redacted; dict keys are
        kept. A string stored under a key that names a secret (``api_key``, ``password``…)
        is replaced as a whole. Anything else (numbers, None, booleans) is returned as is.
        """
        if isinstance(value, str):
            return self.redact_text(value)
        if isinstance(value, dict):
            return {key: self._redact_entry(key, item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.redact_value(item) for item in value]
        if isinstance(value, tuple):
            return tuple(self.redact_value(item) for item in value)
        return value

    def _redact_entry(self, key: Any, item: Any) -> Any:
        if (
            isinstance(key, str)
            and isinstance(item, str)
            and item
            and not item.startswith("[REDACTED")
            and SECRET_KEY_NAME.fullmatch(key)
        ):
            self._counts[KEYED_VALUE_RULE] += 1
            return marker(KEYED_VALUE_RULE)
        return self.redact_value(item)

    def redact_record(self, record: SessionRecord) -> SessionRecord:
        """A new record with every free-text field of the session and its messages redacted;
        identifiers, timestamps and numbers are copied unchanged (see :mod:`.records`)."""
        from .records import redact_session_record

        return redact_session_record(record, self.redact_value)
