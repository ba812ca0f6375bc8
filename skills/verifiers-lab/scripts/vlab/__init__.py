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
    own PYTHONPYCACHEPREFIX or PYTHONDONTWRITEBYTECODE is kept."""
    import os
    import sys

    if not sys.pycache_prefix:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        sys.pycache_prefix = os.path.join(base, "verifiers-lab", "pycache")
    os.environ.setdefault("PYTHONPYCACHEPREFIX", sys.pycache_prefix)
    sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))


_bytecode_outside_the_pack()
