"""verifiers-lab internal library: the logic behind the scripts in ``scripts/``.

Organised by concern; the scripts are thin entry points that parse arguments,
call into this package and render a :class:`vlab.core.result.Result`.
"""

__version__ = "0.1.0"


def _bytecode_outside_the_pack() -> str:
    """Python caches bytecode beside each imported file: here, inside the installed skill folder, which
    `npx skills update` replaces and SKILL.md says nothing may write into. The cache goes to
    $XDG_CACHE_HOME (or ~/.cache)/verifiers-lab/pycache instead, for this process and every child it starts
    (the workers, the rehearsal's venv); the scripts keep Python from writing until this has run. A user's
    own PYTHONPYCACHEPREFIX or PYTHONDONTWRITEBYTECODE is kept. Returns the cache folder.

    A process that writes no bytecode (PYTHONDONTWRITEBYTECODE) writes nothing anywhere, and neither do the
    children that inherit that, so it keeps Python's own lookup and exports no prefix: a prefix there hides
    every installed package's compiled files and compiles them from source on every start (issue 37: ~120
    modules, 0.1-0.2 s, in each script; `prime --version` 0.5 -> 1.4 s, and every vf-eval child of the tests).
    A child that clears PYTHONDONTWRITEBYTECODE sets PYTHONPYCACHEPREFIX itself (hosted.rehearse_load)."""
    import os
    import sys

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    ours = os.path.join(base, "verifiers-lab", "pycache")
    sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    if not sys.dont_write_bytecode:
        sys.pycache_prefix = sys.pycache_prefix or ours
        os.environ.setdefault("PYTHONPYCACHEPREFIX", sys.pycache_prefix)  # children that write bytecode write it there
        return sys.pycache_prefix
    if sys.pycache_prefix == ours:  # a child that inherited our prefix but writes nothing: Python's own lookup
        sys.pycache_prefix = None  # (a worker compiled verifiers and datasets from source: 3 s more a start)
    if os.environ.get("PYTHONPYCACHEPREFIX") == ours:
        del os.environ["PYTHONPYCACHEPREFIX"]  # nor do its children look there
    return sys.pycache_prefix or ours


PYCACHE_PREFIX = _bytecode_outside_the_pack()
