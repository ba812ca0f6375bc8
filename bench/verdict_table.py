#!/usr/bin/env python3
"""The regression table of test_reward verdicts: every environment the tests run, before and after.

Usage: verdict_table.py BEFORE.jsonl AFTER.jsonl [VENV]  (logs written by bench/verdict_plugin.py).
Prints a Markdown table, changed verdicts marked; the n-th run of an environment in a test is matched
with the n-th run of it in the same test.
"""

import json
import re
import sys
from collections import Counter


def load(path: str) -> dict:
    out, seen = {}, Counter()
    try:
        lines = open(path).read().splitlines()
    except FileNotFoundError:
        return out
    for line in lines:
        r = json.loads(line)
        key = (r["test"].split("::", 1)[-1], re.sub(r"_\d+(\.py)$", r"\1", r["env"]))  # tmp names: sp_env_123.py
        seen[key] += 1
        out[key + (seen[key],)] = r
    return out


def verdict(r: dict | None) -> str:
    if r is None:
        return "not run"
    fails = ", ".join(r["fail"]) or "-"
    warns = ", ".join(r["warn"])
    return f"exit {r['exit']}; fail: {fails}" + (f"; warn: {warns}" if warns else "")


def main() -> None:
    before, after = load(sys.argv[1]), load(sys.argv[2])
    venv = sys.argv[3] if len(sys.argv) > 3 else ""
    keys = list(dict.fromkeys([*before, *after]))
    print("| venv | test | environment | before | after | changed |")
    print("|---|---|---|---|---|---|")
    for key in keys:
        b, a = before.get(key), after.get(key)
        changed = "" if b and a and (b["exit"], b["fail"]) == (a["exit"], a["fail"]) else "**yes**"
        test = key[0].replace("|", "/")
        print(f"| {venv} | {test} | {key[1]} | {verdict(b)} | {verdict(a)} | {changed} |")


if __name__ == "__main__":
    main()
