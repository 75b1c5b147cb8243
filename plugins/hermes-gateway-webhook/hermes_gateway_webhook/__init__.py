"""The ``webhook`` platform of the Hermes sessions gateway: signed JSON over HTTP."""
