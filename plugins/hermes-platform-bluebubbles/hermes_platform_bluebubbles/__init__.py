"""The ``bluebubbles`` (iMessage) platform of the Hermes sessions gateway."""
