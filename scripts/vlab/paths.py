"""Where the pack's own files are, in a checkout, an installed skill folder, or a pip install."""

from __future__ import annotations

from pathlib import Path

# scripts/vlab/paths.py -> the pack's root (checkout or `.agents/skills/verifiers-lab/`)
PACK_ROOT = Path(__file__).resolve().parents[2]


def templates_dir() -> Path:
    """The `templates/` folder; in a pip-installed wheel it ships as the `vlab_templates` package."""
    local = PACK_ROOT / "templates"
    if local.is_dir():
        return local
    import importlib.util

    spec = importlib.util.find_spec("vlab_templates")  # a namespace package: no __init__.py among the templates
    if spec is None or not spec.submodule_search_locations:
        return local  # callers report the missing file with its path
    return Path(list(spec.submodule_search_locations)[0])
