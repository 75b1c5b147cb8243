"""Import Codex CLI session logs (rollouts) into Hermes sessions.

The plugin registers the importer ``codex`` and the session origin ``codex-cli``
(:mod:`hermes_import_codex.plugin`). :class:`~hermes_import_codex.importer.CodexImporter`
is a pure reader: discovery (:mod:`.discovery`), the streaming reader (:mod:`.reader`), the
transcript rules (:mod:`.turns`) and the meaning of single records (:mod:`.records`).
"""
