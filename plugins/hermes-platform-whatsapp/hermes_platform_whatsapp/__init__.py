"""The ``whatsapp`` platform of the Hermes sessions gateway (WhatsApp Business Cloud API)."""
