"""The toy kind's template: a v1 taskset that asks for a colour's #rrggbb code in \\boxed{} and compares the codes
case-insensitively. ``SLOPPY`` (set by the test) compares only the first five characters: another colour pays."""

from __future__ import annotations

import json

import verifiers.v1 as vf

SLOPPY = False
SYSTEM = "Give the colour's code as #rrggbb inside \\boxed{}, for example \\boxed{#000000}."


def code(reply: str | None) -> str:
    found = vf.extract_boxed_answer(reply or "", strict=True) or ""
    return found.strip().lower()[:5] if SLOPPY else found.strip().lower()


class HexData(vf.TaskData):
    answer: str


class HexTask(vf.Task[HexData]):
    @vf.reward(weight=1.0)
    async def correct_code(self, trace: vf.Trace) -> float:
        want = self.data.answer.strip().lower()
        got = code(trace.last_reply)
        return 1.0 if got and got == (want[:5] if SLOPPY else want) else 0.0


class HexConfig(vf.TasksetConfig):
    dataset_path: str = "colours.jsonl"


class HexTaskset(vf.Taskset[HexTask, HexConfig]):
    def load(self):
        with open(self.config.dataset_path) as f:
            for i, line in enumerate(f):
                row = json.loads(line)
                data = HexData(id=str(i), prompt=row["question"], system_prompt=SYSTEM, answer=row["answer"])
                yield HexTask(data, self.config.task)


__all__ = ["HexTaskset"]
