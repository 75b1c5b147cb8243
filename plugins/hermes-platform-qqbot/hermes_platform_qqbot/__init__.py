"""The ``qqbot`` platform of the Hermes sessions gateway (the QQ Bot open platform API)."""
