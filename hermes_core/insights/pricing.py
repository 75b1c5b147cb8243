"""Per-model token prices (``insights.prices`` in ``config.yaml``) and the cost estimates made
from them for sessions that stored no cost of their own.

No prices are built in: published prices change and differ per provider and plan, and an
estimate from a stale table would look as trustworthy as a real one. A session whose model has
no price is counted and named in the report instead of being given a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

TOKENS_PER_PRICE_UNIT = 1_000_000


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """USD per million tokens for one model. Prompt-cache reads and writes have their own
    prices when the table gives them; without one they are priced as input."""

    input_per_mtok: float
    output_per_mtok: float
    cache_read_per_mtok: float | None = None
    cache_write_per_mtok: float | None = None

    @property
    def cache_read_price(self) -> float:
        """USD per million cache-read tokens (the input price when the table gives none)."""
        return self.input_per_mtok if self.cache_read_per_mtok is None else self.cache_read_per_mtok

    @property
    def cache_write_price(self) -> float:
        """USD per million cache-write tokens (the input price when the table gives none)."""
        if self.cache_write_per_mtok is None:
            return self.input_per_mtok
        return self.cache_write_per_mtok

    def estimate(
        self,
        input_tokens: int,
        output_tokens: int,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
    ) -> float:
        """The cost in USD of ``input_tokens`` read (outside the cache), ``output_tokens``
        written, and ``cache_read_tokens``/``cache_write_tokens`` read from/written to the
        prompt cache."""
        return (
            input_tokens * self.input_per_mtok
            + output_tokens * self.output_per_mtok
            + cache_read_tokens * self.cache_read_price
            + cache_write_tokens * self.cache_write_price
        ) / TOKENS_PER_PRICE_UNIT


class PriceTable:
    """Model name → :class:`ModelPrice`.

    A model is priced by its exact name, else by the longest table entry it starts with
    followed by ``-``, ``@`` or ``:`` (so ``claude-sonnet-4`` prices
    ``claude-sonnet-4-20250514``, and a ``gpt-5-mini`` entry wins over ``gpt-5`` for it).
    """

    def __init__(self, prices: Mapping[str, ModelPrice] | None = None) -> None:
        self._prices = dict(prices or {})

    @classmethod
    def from_config(cls, table: Mapping[str, Any]) -> PriceTable:
        """The table from the checked ``insights.prices`` setting."""
        return cls({model: _price(price) for model, price in table.items()})

    def __len__(self) -> int:
        return len(self._prices)

    def price_for(self, model: str | None) -> ModelPrice | None:
        """The price of ``model``, or None when the table has none (or the model is unknown)."""
        if model is None:
            return None
        exact = self._prices.get(model)
        if exact is not None:
            return exact
        best: str | None = None
        for entry in self._prices:
            if (
                len(model) > len(entry)
                and model.startswith(entry)
                and model[len(entry)] in "-@:"
                and (best is None or len(entry) > len(best))
            ):
                best = entry
        return None if best is None else self._prices[best]


def _price(entry: Mapping[str, Any]) -> ModelPrice:
    def optional(name: str) -> float | None:
        value = entry.get(name)
        return None if value is None else float(value)

    return ModelPrice(
        float(entry["input_per_mtok"]),
        float(entry["output_per_mtok"]),
        optional("cache_read_per_mtok"),
        optional("cache_write_per_mtok"),
    )
