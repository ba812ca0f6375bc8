"""What the rehearsal's stages share (``rehearse`` runs them; ``rehearse_data``, ``rehearse_load`` and
``rehearse_judge`` are the stages): the options, a config's source, the built wheel, a check, the module a
Hub id loads as, a path as the user sees it, and the gold verdict on the installed package. Below every stage,
so no stage imports another's runner."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from vlab.core.result import EXIT_FAIL, Check

VERIFIERS = "verifiers==0.4.0"  # what Hosted Training and current prime-rl run (v1 tasksets)
DEFAULT_ROWS = 20
BUILD_TIMEOUT = 300.0
INSTALL_TIMEOUT = 900.0
LOAD_TIMEOUT = 600.0
SCORE_TIMEOUT = 30.0  # per reward call
EPS = 1e-6


@dataclass(frozen=True)
class RehearseOptions:
    rows: int = DEFAULT_ROWS
    online: bool = True
    load_timeout: float = LOAD_TIMEOUT
    specs: tuple[tuple[str, str], ...] = ()  # (env id, local folder the user named)
    cwd: str | None = None  # where environments/<module> is looked for (default: the current folder)
    # Nothing to rehearse (no source folder, no uv) fails: no config is written without a rehearsal
    # (submit_training; --no-rehearse skips it knowingly). False: a warning (local_train's hand-off).
    required: bool = False


@dataclass
class Source:
    where: str  # orchestrator.train.source[0]
    env_id: str
    args: dict


@dataclass
class Rehearsal:
    tried: list[dict] = field(default_factory=list)  # per source: what was built, installed, loaded, scored
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {"sources": self.tried, "seconds": round(self.seconds, 2)}


def _check(status: str, message: str, hint: str = "", id: str = "rehearse") -> Check:
    return Check(id, status, message, hint, EXIT_FAIL)


def module_name(env_id: str) -> str:
    """verifiers 0.4.0's rule (``_import_plugin``): last segment, @version dropped, '-' -> '_', lower-case."""
    return env_id.rsplit("/", 1)[-1].split("@", 1)[0].replace("-", "_").lower()


def user_path(path: Path, cwd: Path | None = None) -> str:
    """``path`` as the user sees it from the current folder: relative inside it, else absolute."""
    base = Path(cwd or Path.cwd()).resolve()
    try:
        return Path(path).resolve().relative_to(base).as_posix() or "."
    except ValueError:
        return str(Path(path).resolve())


@dataclass
class Wheel:
    path: Path
    sha256: str
    names: list[str]
    requires: list[str]
    built: str = "as `prime env push` does"  # how it was built, as the build check says it


def gold_check(src: Source, scored: dict, n_rows: int, rewards: list[str], full: float | None = None) -> Check:
    """``full``: the sum of the positive reward weights (every reward at 1.0), when known."""
    named = f"{src.where} ({src.env_id})"
    if not scored:
        return _check(
            "warn",
            f"{named}: none of the first {n_rows} rows has a gold answer, so no reward was scored",
            "check the answer column (ANSWER_COLUMN) names the dataset's reference answers",
            id="rehearse-gold",
        )
    values = [b for _, b in scored.values() if b is not None]
    top = max(values) if values else None
    what = ", ".join(rewards) or "its rewards"
    if top is None or top <= EPS:
        return _check(
            "fail",
            f"{named}: the gold answer earns no reward through the installed package ({what}) on any of "
            f"{len(scored)} rows",
            "test the package as installed (test_reward on the folder): the reward or the answer column is wrong",
            id="rehearse-gold",
        )
    low = [(i, g, b) for i, (g, b) in scored.items() if b is None or b < top - EPS]
    if low:
        shown = "; ".join(f"row {i} gold {g!r} (best {b if b is None else round(b, 4)})" for i, g, b in low[:5])
        return _check(
            "fail",
            f"{named}: the gold answer does not earn the top reward ({top:.4g}) on {len(low)} of {len(scored)} rows "
            f"through the installed package: {shown}",
            "look at those rows' answers: written in a form the reward never accepts, or wrong",
            id="rehearse-gold",
        )
    if full is not None and top < full - EPS:  # e.g. a correctness reward that never fires beside a format one
        return _check(
            "warn",
            f"{named}: the gold answer earns {top:.4g} on all {len(scored)} rows through the installed package, "
            f"below {full:.4g}, every reward at 1.0 ({what})",
            "check which reward the gold misses (test_reward on the folder shows each one); fine if that reward "
            "is not about correctness or never reaches 1.0",
            id="rehearse-gold",
        )
    return _check(
        "pass",
        f"{named}: the gold answer earns the top reward ({top:.4g}) on all {len(scored)} rows scored through "
        f"the installed package's rewards ({what})",
        id="rehearse-gold",
    )
