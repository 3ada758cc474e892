"""The ``orlbuild`` command line (Typer). Entry point: :func:`orlbuild.cli.main.run`."""
