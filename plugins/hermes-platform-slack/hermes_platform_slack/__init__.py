"""The ``slack`` platform of the Hermes sessions gateway (slack_sdk, Events API)."""
