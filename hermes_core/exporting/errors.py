"""The one error type of the export engine."""

from __future__ import annotations


class ExportError(Exception):
    """An export that was refused or could not complete; the message is one line for the user.

    Raised before anything is written when the request itself is wrong (a missing format, a
    bare bulk export, an option the format does not take), and after writing when a check
    fails (a file that does not verify, a delegate set that changed before a delete).
    """
