"""The ``feishu`` platform of the Hermes sessions gateway (Feishu / Lark Open API, events)."""
