"""The ``sms`` platform of the Hermes sessions gateway (Twilio)."""
