"""``hermes acp``: the Hermes agent inside an editor, over the Agent Client Protocol (stdio).

The entry point (:mod:`.plugin`) only adds the command; the rest loads when it runs:
:mod:`.command` (the command), :mod:`.stdio` (JSON-RPC on stdin/stdout, logs on stderr),
:mod:`.agent` (the ACP methods), :mod:`.runtime` (worker threads, their stores, the model),
:mod:`.turns` (one turn streamed as ``session/update`` notifications), :mod:`.replay`
(a stored history as notifications), :mod:`.listing` (``session/list``) and :mod:`.errors`
(one-line JSON-RPC errors).
"""
