"""Discovery latency per probe class on an existing store, without loading anything.

(p) loads a fresh store and then probes it; this probes a store that is already there (a
PostgreSQL database filled by ``hermes sessions migrate``, say), with the same probe queries
(:func:`bench.backends.probes`, drawn from ``--probes-from``, the SQLite store the bench built
from the same corpus) and the same call (``session_search``), so one change can be measured
before and after on the same data without re-ingesting a million messages::

    uv run python -m bench.probe_store postgresql://…/db \\
        --probes-from sqlite:///bench/.corpus/stores-seed1-1M/store/state.db --repeats 10

It prints p50 and p95 per probe class in milliseconds. Nothing is written to either store.
"""

from __future__ import annotations

import argparse
import random
import time

from bench.backends import percentile, probes
from hermes_core.plugins import PluginHost
from hermes_core.search import session_search
from hermes_core.store.backends import open_url


def main(argv: list[str] | None = None) -> None:
    """Probe ``url`` and print the figures (see the module doc)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="store.url of the store to probe")
    parser.add_argument(
        "--probes-from", help="store.url the probe words are drawn from (default: url itself)"
    )
    parser.add_argument("--repeats", type=int, default=10, help="rounds over every probe")
    args = parser.parse_args(argv)
    host = PluginHost()
    source = open_url(args.probes_from or args.url, host=host)
    try:
        queries = probes(source, random.Random(1))
    finally:
        source.close()
    store = open_url(args.url, host=host)
    try:
        for probe_class, texts in queries.items():
            for text in texts:  # a first round warms the caches and the averages, untimed
                session_search(store, query=text)
            samples: list[float] = []
            for _ in range(args.repeats):
                for text in texts:
                    started = time.perf_counter()
                    session_search(store, query=text)
                    samples.append((time.perf_counter() - started) * 1000)
            print(
                f"{probe_class:7} p50 {percentile(samples, 0.5):7.1f} ms  "
                f"p95 {percentile(samples, 0.95):7.1f} ms  ({len(samples)} searches: {texts})"
            )
    finally:
        store.close()


if __name__ == "__main__":
    main()
