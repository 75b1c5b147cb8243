"""``hermes batch FILE``: prompts from a file, one agent turn and one session (source
``batch``) each, without a terminal.

One concern per module: :mod:`.prompts` reads the file (``.jsonl`` or ``.txt``, malformed
lines counted, never fatal), :mod:`.ledger` recognises prompts a earlier run of the same file
already answered (``--resume``), :mod:`.runner` runs the turns through the core's
:class:`~hermes_core.agent.TurnEngine` on a few worker threads and stops cleanly on a signal,
:mod:`.report` shows progress and the summary, :mod:`.command` is the ``hermes batch``
command. The built-in plugin :mod:`hermes_core.builtins.batch` adds the command.
"""
