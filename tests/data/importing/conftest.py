"""The example importer's own test runs inside its installed copy
(tests/importing/test_writing_an_importer.py), not as part of this suite."""

collect_ignore = ["example_importer"]
