"""The ``weixin`` platform of the Hermes sessions gateway (a Weixin Official Account)."""
