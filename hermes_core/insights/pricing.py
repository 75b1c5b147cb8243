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
    """USD per million tokens for one model."""

    input_per_mtok: float
    output_per_mtok: float

    def estimate(self, input_tokens: int, output_tokens: int) -> float:
        """The cost in USD of ``input_tokens`` read and ``output_tokens`` written."""
        return (
            input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok
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
        return cls(
            {
                model: ModelPrice(float(price["input_per_mtok"]), float(price["output_per_mtok"]))
                for model, price in table.items()
            }
        )

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
