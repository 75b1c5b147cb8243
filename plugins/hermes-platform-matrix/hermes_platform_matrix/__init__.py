"""The ``matrix`` platform of the Hermes sessions gateway: a matrix-nio client in Matrix rooms."""
