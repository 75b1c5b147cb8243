"""Figure (r): the redaction engine's recall, false positives and throughput.

:mod:`.formats` generates secrets from the providers' documented formats, :mod:`.planted`
places them in prose, code and logs, :mod:`.measure` runs the engine over that corpus, over
the real logs of ``../shared/fixtures`` and over hostile input; :mod:`.public` measures recall
and false positives through the export engine on ``public_corpus/`` (other projects' test
data and public clean text). See ``bench/README.md``.
"""
