"""The ``signal`` platform of the Hermes sessions gateway (signal-cli's daemon HTTP API)."""
