"""Session lifecycle (SPEC L1–L3): prune, archive, and the automatic clean-up.

One concern per module:

* :mod:`.state` — the last-run times and the last failure, kept in the store's ``state_meta``
  table so every process on the same Hermes home sees them;
* :mod:`.lock` — the cross-process lock that keeps two processes from pruning at once;
* :mod:`.protection` — which sessions prune and archive must leave alone (pinned sessions,
  the compression lineages holding them, families with a pinned or running delegate);
* :mod:`.prune` — planning and running a prune in batches, each one transaction;
* :mod:`.archive` — archive, unarchive and the auto-archive sweep;
* :mod:`.vacuum` — when a VACUUM is worth its cost, and running it;
* :mod:`.autoclean` — the throttled start-up clean-up that never raises;
* :mod:`.startup` — the tiny hook the command line arms at start-up.
"""
