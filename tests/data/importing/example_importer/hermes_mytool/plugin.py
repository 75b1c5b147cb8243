"""The hooks: the importer ``mytool`` and the session origin it stores sessions under."""

from hermes_hookspecs import SourceInfo, hookimpl


@hookimpl
def hermes_register_sources(register):
    register(SourceInfo(name="mytool", label="MyTool", short_label="mytool"))


@hookimpl
def hermes_register_importers(register):
    from hermes_mytool.importer import MyToolImporter  # loaded only when an import runs

    register(MyToolImporter())
