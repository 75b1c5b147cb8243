"""The terminal chat: ``hermes`` / ``hermes chat`` (SPEC R1–R5, S4).

One concern per module: :mod:`.workspace` (cwd and git facts), :mod:`.crumbs` (which session
this terminal had), :mod:`.resume` (what ``-c`` / ``-r`` / ``--in`` mean, no terminal needed),
:mod:`.recap` (the resume recap panel), :mod:`.output` (streaming answers with rich),
:mod:`.commands` (slash commands), :mod:`.snapshot` (``/save``), :mod:`.conversation` (one
chat's state over the turn engine) and :mod:`.repl` (the prompt_toolkit loop). Nothing here
is imported by ``hermes --help`` or the ``sessions`` commands.
"""
