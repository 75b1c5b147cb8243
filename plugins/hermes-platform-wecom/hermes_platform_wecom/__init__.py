"""The ``wecom`` platform of the Hermes sessions gateway (a WeCom self-built application)."""
