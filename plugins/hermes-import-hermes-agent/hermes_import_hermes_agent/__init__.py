"""Hermes sessions plugin: import a Hermes Agent ``state.db``
(``hermes sessions import --from hermes-agent [PATH]``)."""
