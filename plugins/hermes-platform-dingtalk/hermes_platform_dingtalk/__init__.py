"""The ``dingtalk`` platform of the Hermes sessions gateway (robot messages, HTTP mode)."""
