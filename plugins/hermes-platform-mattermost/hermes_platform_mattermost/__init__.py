"""The ``mattermost`` platform of the Hermes sessions gateway."""
