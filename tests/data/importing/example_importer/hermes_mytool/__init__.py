"""Hermes sessions plugin: import MyTool chat logs (``hermes sessions import --from mytool``)."""
