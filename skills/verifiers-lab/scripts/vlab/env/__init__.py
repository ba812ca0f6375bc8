"""Loading and scoring verifiers environments of either generation behind one interface.

Callers use ``load_env`` and the ``Environment`` it returns, and decide on
``env.capabilities`` (multi_turn, group_rewards, tools, rollout_loop, silent_reward_errors);
they never test which verifiers generation an environment is. Everything in and out is
plain data (``Row``, completions as text or message dicts, ``Score``, ``RolloutResult``).

Modules:
  types       the plain data: Capabilities, Row, Reply, Score, FunctionError, FormatHints,
              RewardFunction, RolloutResult
  base        the ``Environment`` interface (rows, format hints, scoring, its own row checks (validate), rollouts, describe)
  locate      find an environment (file, folder, installed id), tell its generation, load it,
              map loading errors to exit codes (``load_env``)
  classic     verifiers <= 0.3.x ``load_environment``: Rubric scoring, the env's own rollout
              loop (multi-turn, tools) with an in-process client
  v1          v1 tasksets scored through ``task.score(trace)``
  instrument  reward functions wrapped to capture swallowed exceptions, NaN, hangs; timeouts
  messages    chat messages as plain dicts; the ``generate`` seam
  generation  which generation an environment is (v1 / classic / unknown) and why, read from its
              source and requirements without importing it; Hub ids through `prime env inspect`
  compat      every private verifiers API the others need, each tested by tests/test_env_compat.py
  remote      ``RemoteEnvironment``: the same interface with the user's code in a child process
              (captured output, exits/crashes/hangs as incidents, parent-enforced wall-clock timeouts)
  worker      the child process's side: loads, scores and runs rollouts on request over a pipe
"""

from vlab.env.base import Environment
from vlab.env.locate import load_env
from vlab.env.types import (
    Capabilities,
    FormatHints,
    FunctionError,
    Generate,
    Reply,
    RewardFunction,
    RolloutResult,
    Row,
    Score,
    finite,
)

__all__ = [
    "Capabilities",
    "Environment",
    "FormatHints",
    "FunctionError",
    "Generate",
    "Reply",
    "RewardFunction",
    "RolloutResult",
    "Row",
    "Score",
    "finite",
    "load_env",
]
