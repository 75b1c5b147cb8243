"""Figure (r): the redaction engine's recall, false positives and throughput.

:mod:`.formats` generates secrets from the providers' documented formats, :mod:`.planted`
places them in prose, code and logs, :mod:`.measure` runs the engine over that corpus, over
the real logs of ``../shared/fixtures`` and over hostile input. See ``bench/README.md``.
"""
