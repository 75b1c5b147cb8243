"""Evaluates the test-data expressions of gitleaks' rule files and trufflehog's detector tests
(a tiny subset of Go: string literals, ``+``, ``[]string{…}``, ``append``, ``fmt.Sprintf`` and
the generators of ``secrets.NewSecret(<format>)``), for :mod:`collect` only."""

from __future__ import annotations

import importlib
import random
import re
from dataclasses import dataclass, field

sre_parse = importlib.import_module("re._parser")
C = importlib.import_module("re._constants")


# ------------------------------------------------------------------ a regex → string generator
def generate(pattern: str, rng: random.Random) -> str:
    """A random string matching ``pattern`` (a format such as ``[a-z0-9]{36}``)."""
    pattern = pattern.replace(r"\z", "")
    return _gen(sre_parse.parse(pattern), rng)


_CATEGORY = {
    C.CATEGORY_DIGIT: "0123456789",
    C.CATEGORY_WORD: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_",
    C.CATEGORY_SPACE: " ",
}


def _charset(items) -> str:
    chars: list[str] = []
    negate = False
    for op, arg in items:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            chars.append(chr(arg))
        elif op is C.RANGE:
            chars.extend(chr(c) for c in range(arg[0], arg[1] + 1))
        elif op is C.CATEGORY:
            chars.extend(_CATEGORY.get(arg, ""))
    if negate:
        pool = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
        return "".join(c for c in pool if c not in chars)
    return "".join(chars)


def _gen(items, rng: random.Random) -> str:
    out: list[str] = []
    for op, arg in items:
        if op is C.LITERAL:
            out.append(chr(arg))
        elif op is C.NOT_LITERAL:
            out.append("x" if chr(arg) != "x" else "y")
        elif op is C.IN:
            out.append(rng.choice(_charset(arg)))
        elif op is C.ANY:
            out.append(rng.choice("abcdef0123"))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            low, high, body = arg
            if high == C.MAXREPEAT:
                high = low + 40
            for _ in range(rng.randint(low, high)):
                out.append(_gen(body, rng))
        elif op is C.SUBPATTERN:
            out.append(_gen(arg[-1], rng))
        elif op is C.BRANCH:
            out.append(_gen(rng.choice(arg[1]), rng))
        elif op is C.CATEGORY:
            out.append(rng.choice(_CATEGORY.get(arg, "a")))
        elif op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            pass
        else:
            raise ValueError(f"unsupported {op}")
    return "".join(out)


# ------------------------------------------------------------------ values
@dataclass
class Text:
    """A string with the spans of generated secrets inside it."""

    text: str
    secrets: list[str] = field(default_factory=list)
    generated_from: list[str] = field(default_factory=list)
    context_identifier: str = ""
    """For a value gitleaks' test places in contexts of its own: the identifier it names
    the key after (``GenerateSampleSecrets("heroku", …)``)."""

    def __add__(self, other: Text) -> Text:
        return Text(
            self.text + other.text,
            self.secrets + other.secrets,
            self.generated_from + other.generated_from,
        )


# ------------------------------------------------------------------ tokenizer
TOKEN = re.compile(
    r"""(?P<ws>\s+)|(?P<comment>//[^\n]*)|(?P<raw>`[^`]*`)|(?P<str>"(?:[^"\\\n]|\\.)*")"""
    r"""|(?P<char>'(?:[^'\\\n]|\\.)*')|(?P<num>\d+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)"""
    r"""|(?P<op>\.\.\.|:=|[-+*/(){}\[\],=:;&|!<>.%])"""
)


def tokenize(src: str) -> list[tuple[str, str]]:
    out = []
    pos = 0
    while pos < len(src):
        m = TOKEN.match(src, pos)
        if not m:
            out.append(("op", src[pos]))
            pos += 1
            continue
        pos = m.end()
        kind = m.lastgroup
        if kind in ("ws", "comment"):
            if kind == "ws" and "\n" in m.group():
                out.append(("nl", "\n"))
            continue
        out.append((kind, m.group()))
    return out


def go_string(tok: tuple[str, str]) -> str:
    kind, value = tok
    if kind == "raw":
        return value[1:-1].replace("\r", "")
    body = value[1:-1]
    return re.sub(
        r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)",
        lambda m: (
            {
                "n": "\n",
                "t": "\t",
                "r": "\r",
                "\\": "\\",
                '"': '"',
                "'": "'",
                "a": "\a",
                "b": "\b",
                "f": "\f",
                "v": "\v",
            }.get(m.group(1))
            or chr(int(m.group(1)[1:], 16))
        ),
        body,
    )


class Unsupported(Exception):
    pass


class Evaluator:
    def __init__(self, tokens, env, rng: random.Random):
        self.t = tokens
        self.i = 0
        self.env = env
        self.rng = rng

    def peek(self, skip_nl=True):
        j = self.i
        while skip_nl and j < len(self.t) and self.t[j][0] == "nl":
            j += 1
        return self.t[j] if j < len(self.t) else ("eof", "")

    def next(self):
        while self.i < len(self.t) and self.t[self.i][0] == "nl":
            self.i += 1
        tok = self.t[self.i]
        self.i += 1
        return tok

    def expect(self, value):
        tok = self.next()
        if tok[1] != value:
            raise Unsupported(f"expected {value}, got {tok}")

    def expr(self):
        left = self.term()
        while self.peek(skip_nl=False)[1] == "+":
            self.next()
            right = self.term()
            left = concat(left, right)
        return left

    def args(self):
        self.expect("(")
        out = []
        while self.peek()[1] != ")":
            out.append(self.expr())
            if self.peek()[1] == "...":
                self.next()
            if self.peek()[1] == ",":
                self.next()
        self.expect(")")
        return out

    def term(self):
        tok = self.next()
        kind, value = tok
        if kind in ("raw", "str"):
            return Text(go_string(tok))
        if value == "[":
            self.expect("]")
            self.expect("string")
            self.expect("{")
            items = []
            while self.peek()[1] != "}":
                items.append(self.expr())
                if self.peek()[1] == ",":
                    self.next()
            self.expect("}")
            return flatten(items)
        if kind == "name":
            if self.peek(skip_nl=False)[1] == "(":
                return self.call(value, self.args())
            if value in self.env:
                return self.env[value]
            raise Unsupported(f"unknown name {value}")
        if kind == "num":
            return Text(value)
        raise Unsupported(f"term {tok}")

    def call(self, name, args):
        name = name.split(".")[-1]
        simple = {
            "Numeric": "[0-9]{%s}",
            "Hex": "[a-f0-9]{%s}",
            "AlphaNumeric": "[a-z0-9]{%s}",
            "AlphaNumericExtendedShort": "[a-z0-9_-]{%s}",
            "AlphaNumericExtended": "[a-z0-9=_\\-]{%s}",
            "AlphaNumericExtendedLong": "[a-z0-9\\/=_\\+\\-]{%s}",
        }
        if name in simple:
            return Text(simple[name] % args[0].text)
        if name == "Hex8_4_4_4_12":
            return Text("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
        if name in ("NewSecret", "newPlausibleSecret"):
            fmt = args[0].text
            value = generate(fmt, self.rng)
            return Text(value, [value], [fmt])
        if name == "Sprintf":
            fmt, rest = args[0], args[1:]
            pieces = re.split(r"(%[sdq])", fmt.text)
            out = Text("")
            k = 0
            for piece in pieces:
                if piece in ("%s", "%d"):
                    out = out + rest[k]
                    k += 1
                elif piece == "%q":
                    out = out + Text('"') + rest[k] + Text('"')
                    k += 1
                else:
                    out = out + Text(piece)
            return out
        if name in ("GenerateSampleSecrets", "GenerateSampleSecret"):
            ident, secret = args[0].text, args[1]
            if not secret.secrets:  # a literal secret: the whole string is the secret
                secret = Text(secret.text, [secret.text], [])
            return [Text(secret.text, secret.secrets, secret.generated_from, ident)]
        if name == "append":
            return flatten(args)
        if name == "Repeat":
            return Text(args[0].text * int(args[1].text))
        if name in ("ToUpper",):
            return Text(args[0].text.upper(), [s.upper() for s in args[0].secrets])
        raise Unsupported(f"call {name}")


def concat(a, b):
    if isinstance(a, list) or isinstance(b, list):
        raise Unsupported("concat of lists")
    return a + b


def flatten(items):
    out = []
    for item in items:
        if isinstance(item, list):
            out.extend(item)
        else:
            out.append(item)
    return out


def split_statements(tokens):
    """Top-level statements of a body: split on newlines at bracket depth 0."""
    stmts, cur, depth = [], [], 0
    for tok in tokens:
        if tok[1] in "([{" and tok[0] == "op":
            depth += 1
        elif tok[1] in ")]}" and tok[0] == "op":
            depth -= 1
        if tok[0] == "nl" and depth == 0:
            if cur:
                stmts.append(cur)
            cur = []
            continue
        # a trailing '+' or ',' continues the statement
        cur.append(tok)
    if cur:
        stmts.append(cur)
    # join statements whose previous ends with an operator
    joined = []
    for s in stmts:
        if joined and joined[-1] and joined[-1][-1][1] in ("+", ",", "(", "{"):
            joined[-1] = joined[-1] + s
        else:
            joined.append(s)
    return joined


def run_statements(tokens, env, rng, log):
    for stmt in split_statements(tokens):
        if stmt and stmt[0][1] == "var":
            stmt = stmt[1:]
            if stmt and stmt[0][1] == "(":
                run_statements(stmt[1:-1], env, rng, log)
                continue
        if len(stmt) >= 3 and stmt[0][0] == "name" and stmt[1][1] in (":=", "="):
            name = stmt[0][1]
            try:
                value = Evaluator(stmt[2:], env, rng).expr()
                env[name] = value
            except (Unsupported, IndexError, ValueError, KeyError) as error:
                log.append(f"{name}: {error}")
        elif len(stmt) >= 4 and stmt[0][0] == "name" and stmt[1][0] == "name" and stmt[2][1] == "=":
            # var name type = expr
            try:
                env[stmt[0][1]] = Evaluator(stmt[3:], env, rng).expr()
            except (Unsupported, IndexError, ValueError, KeyError) as error:
                log.append(f"{stmt[0][1]}: {error}")
