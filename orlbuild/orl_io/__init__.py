"""ORL files in and out: :mod:`~orlbuild.orl_io.eval_files` reads ORL and run files given
on the command line (TSV, JSON, TREC qrels and runs, as docs/input-formats.md, "Input formats"
describes), :mod:`~orlbuild.orl_io.writing` writes stored ORLs as TSV, JSON or
TREC qrels and diffs two of them.

The package imports nothing at load time, so ``orlbuild --help`` stays light.
"""
