"""The ``api-server`` platform of the Hermes sessions gateway: OpenAI-compatible HTTP."""
