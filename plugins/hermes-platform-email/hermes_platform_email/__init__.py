"""The ``email`` platform of the Hermes sessions gateway (IMAP in, SMTP out)."""
