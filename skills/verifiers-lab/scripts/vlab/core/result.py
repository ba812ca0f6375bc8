"""The one result shape every script returns, and the exit codes it maps to.

See ``references/script-contract.md`` and ``references/result.schema.json``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vlab import __version__

# Exit codes (documented in references/script-contract.md).
EXIT_OK = 0
EXIT_FAIL = 1  # checks ran and found problems the user must fix
EXIT_USAGE = 2  # usage error or bad input
EXIT_PREREQ = 3  # a prerequisite is missing: package, CLI, login, GPU
EXIT_EXTERNAL = 4  # an external service failed: network, hub, API, timeout
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # SIGTERM (128 + 15), as a shell reports it

# When several failed checks carry different codes, the most fundamental wins:
# fix bad input before installing things, install things before blaming the network.
_EXIT_PRIORITY = (EXIT_USAGE, EXIT_PREREQ, EXIT_EXTERNAL, EXIT_FAIL)

CHECK_STATUSES = ("pass", "warn", "fail", "skip")


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C would be (``vlab.core.guard`` installs the handler): the same
    clean-up paths run, and the run ends with the partial result and exit 143."""


class ToolError(Exception):
    """An error that ends a script with a clear one-line reason, never a traceback."""

    exit_code = EXIT_FAIL

    def __init__(self, message: str, hint: str = "", exit_code: int | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(ToolError):
    exit_code = EXIT_USAGE


class PrerequisiteError(ToolError):
    exit_code = EXIT_PREREQ


class ExternalError(ToolError):
    exit_code = EXIT_EXTERNAL


@dataclass
class Check:
    id: str
    status: str  # pass | warn | fail | skip
    message: str
    hint: str = ""
    # Exit code this check implies when it fails (1, 2, 3 or 4).
    exit_code: int = EXIT_FAIL

    def __post_init__(self) -> None:
        if self.status not in CHECK_STATUSES:
            raise ValueError(f"bad check status {self.status!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "status": self.status, "message": self.message, "hint": self.hint}


@dataclass
class Result:
    tool: str
    checks: list[Check] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    summary: str = ""
    next_steps: list[str] = field(default_factory=list)
    # Set when the run ended early with an error (usage, prerequisite, external).
    error: ToolError | None = None
    interrupted: bool = False
    terminated: bool = False  # the interruption was SIGTERM: exit 143

    # -- building ---------------------------------------------------------
    def add(self, id: str, status: str, message: str, hint: str = "", exit_code: int = EXIT_FAIL) -> Check:
        check = Check(id, status, message, hint, exit_code)
        self.checks.append(check)
        return check

    def passed(self, id: str, message: str) -> Check:
        return self.add(id, "pass", message)

    def warn(self, id: str, message: str, hint: str = "") -> Check:
        return self.add(id, "warn", message, hint)

    def fail(self, id: str, message: str, hint: str = "", exit_code: int = EXIT_FAIL) -> Check:
        return self.add(id, "fail", message, hint, exit_code)

    def skip(self, id: str, message: str, hint: str = "") -> Check:
        return self.add(id, "skip", message, hint)

    def step(self, text: str) -> None:
        if text not in self.next_steps:
            self.next_steps.append(text)

    # -- verdict ----------------------------------------------------------
    def exit_code(self, strict: bool = False) -> int:
        if self.interrupted:
            return EXIT_TERMINATED if self.terminated else EXIT_INTERRUPTED
        if self.error is not None:
            return self.error.exit_code
        codes = {c.exit_code for c in self.checks if c.status == "fail"}
        if strict and any(c.status == "warn" for c in self.checks):
            codes.add(EXIT_FAIL)
        for code in _EXIT_PRIORITY:
            if code in codes:
                return code
        return EXIT_OK

    def status(self, strict: bool = False) -> str:
        if self.interrupted:
            return "interrupted"
        code = self.exit_code(strict)
        if code == EXIT_OK:
            return "pass"
        if code == EXIT_FAIL and self.error is None:
            return "fail"
        return "error"

    def default_summary(self, strict: bool = False) -> str:
        counts = {s: sum(1 for c in self.checks if c.status == s) for s in CHECK_STATUSES}
        parts = [f"{n} {s}" for s, n in counts.items() if n]
        return ", ".join(parts) if parts else "no checks ran"

    def to_dict(self, strict: bool = False) -> dict[str, Any]:
        summary = self.summary
        if self.error is not None:
            summary = self.error.message
        elif self.interrupted:
            summary = "terminated (SIGTERM)" if self.terminated else "interrupted"
        elif not summary:
            summary = self.default_summary(strict)
        checks = [c.to_dict() for c in self.checks]
        next_steps = list(self.next_steps)
        if self.error is not None and self.error.hint and self.error.hint not in next_steps:
            next_steps.insert(0, self.error.hint)
        return {
            "tool": self.tool,
            "version": __version__,
            "status": self.status(strict),
            "exit_code": self.exit_code(strict),
            "summary": summary,
            "checks": checks,
            "data": self.data,
            "next_steps": next_steps,
        }
