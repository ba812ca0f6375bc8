"""verifiers-lab internal library: the logic behind the scripts in ``scripts/``.

Organised by concern; the scripts are thin entry points that parse arguments,
call into this package and render a :class:`vlab.core.result.Result`.
"""

__version__ = "0.1.0"


def _bytecode_outside_the_pack() -> None:
    """Python caches bytecode beside each imported file: here, inside the installed skill folder, which
    `npx skills update` replaces and SKILL.md says nothing may write into. The cache goes to
    $XDG_CACHE_HOME (or ~/.cache)/verifiers-lab/pycache instead, for this process and every child it starts
    (the workers, the rehearsal's venv); the scripts keep Python from writing until this has run. A user's
    own PYTHONPYCACHEPREFIX or PYTHONDONTWRITEBYTECODE is kept.

    A process that writes no bytecode (PYTHONDONTWRITEBYTECODE) writes nothing anywhere, so it keeps Python's
    own lookup: a prefix there would hide every installed package's compiled files (numpy's, msgspec's, the
    standard library's) and compile ~120 modules from source on every run (issue 37: 0.1-0.2 s a run)."""
    import os
    import sys

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    prefix = sys.pycache_prefix or os.path.join(base, "verifiers-lab", "pycache")
    os.environ.setdefault("PYTHONPYCACHEPREFIX", prefix)  # children that write bytecode write it there
    sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    if not sys.dont_write_bytecode:
        sys.pycache_prefix = prefix
    elif sys.pycache_prefix == prefix:  # a child that inherited our prefix but writes nothing: Python's own lookup
        sys.pycache_prefix = None  # (a worker compiled verifiers and datasets from source: 3 s more a start)


_bytecode_outside_the_pack()
