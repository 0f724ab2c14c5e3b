"""The ``iobound`` command line: parses, calls the packages, prints.

Each subcommand is a module here with ``HELP`` (one line), ``add_arguments(parser)``
and ``run(args) -> int``. Modules import heavy dependencies inside ``run`` so that
``iobound --help`` stays fast.
"""
