"""The human report of inspect_dataset (rich when available, plain text otherwise)."""

from __future__ import annotations

from typing import Any

from vlab.core.result import Result
from vlab.inspect.analysis import InspectRequest


def render(result: Result, console: Any, request: InspectRequest, outcome: Any = None) -> None:
    """The columns table, the answer format and the recommendation; --snippet's code as raw text."""
    render_report(result.data, console, snippet=request.snippet)


def render_report(data: dict[str, Any], console: Any, snippet: str = "none") -> None:
    if not data.get("columns"):
        return
    lines = _plain_lines(data)
    if console is None:
        print("\n".join(lines))
        if snippet != "none" and data.get("recommendation"):
            print(data["recommendation"]["snippets"][snippet])
        return
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="columns", title_justify="left", show_lines=False, pad_edge=False)
    for head in ("column", "type", "nulls", "distinct", "role", "example"):
        table.add_column(head, overflow="fold", max_width=60 if head == "example" else None)
    role_of = {r["column"]: name for name, r in data["roles"].items() if isinstance(r, dict) and "column" in r}
    for col in data["columns"]:
        extra = []
        if col.get("class_names"):
            extra.append(f"ClassLabel: {', '.join(col['class_names'][:8])}")
        if col.get("nested_keys"):
            extra.append(f"keys: {', '.join(col['nested_keys'][:8])}")
        if col.get("list_length"):
            ll = col["list_length"]
            extra.append(f"length {ll['min']}-{ll['max']}")
        example = (col["examples"][0] if col["examples"] else "") + ("\n" + "; ".join(extra) if extra else "")
        table.add_row(
            escape(col["name"]),
            escape(col["type"]),
            str(col["nulls"]),
            str(col["distinct"]),
            role_of.get(col["name"], ""),
            escape(example),
        )
    console.print(table)
    fmt = data.get("answer_format")
    if fmt:
        console.print(
            f"[bold]answer format[/bold]: {escape(fmt['label'])} ({fmt['match_share']:.0%} of {fmt['rows']} rows)"
        )
        console.print(f"  extraction: {escape(fmt.get('extraction', ''))}")
        if fmt.get("extracted_examples"):
            console.print(f"  extracts: {escape(', '.join(fmt['extracted_examples']))}")
        if fmt.get("options_example"):
            console.print("  options (first row): " + escape(" | ".join(fmt["options_example"])))
        if fmt.get("labels"):
            console.print("  labels: " + escape(", ".join(map(str, fmt["labels"]))))
    rec = data.get("recommendation")
    if rec:
        t = rec["templates"]
        console.print(
            f"[bold]recommendation[/bold]: template {rec['template'] or '-'} "
            f"(v1: {t['v1'] or '-'}, classic: {t['classic'] or '-'}), "
            f"parser {escape(rec['parser'])}, reward {escape(rec['reward_strategy'])}"
        )
        if rec.get("calculator"):
            console.print(
                f"  calculator tool: template {rec['calculator']['template']} ({escape(rec['calculator']['why'])})"
            )
        if rec.get("note"):
            console.print(f"  [yellow]{escape(rec['note'])}[/yellow]")
        if snippet != "none":
            # Raw text, never cropped or re-wrapped: it is meant to be copied into a file.
            console.print(f"[bold]{snippet} snippet[/bold]:")
            console.file.write(rec["snippets"][snippet])
            console.file.flush()
        else:
            console.print("  [dim]--snippet classic|v1 prints ready code; --json carries both[/dim]")


def _plain_lines(data: dict[str, Any]) -> list[str]:
    out = ["columns:"]
    for col in data["columns"]:
        ex = col["examples"][0] if col["examples"] else ""
        out.append(f"  {col['name']}: {col['type']} nulls={col['nulls']} e.g. {ex}")
    fmt = data.get("answer_format")
    if fmt:
        out.append(
            f"answer format: {fmt['label']} ({fmt['match_share']:.0%} of {fmt['rows']} rows); "
            f"extraction: {fmt.get('extraction', '')}"
        )
    rec = data.get("recommendation")
    if rec:
        out.append(
            f"recommendation: template {rec['template']} "
            f"(v1: {rec['templates']['v1']}, classic: {rec['templates']['classic']}), "
            f"reward {rec['reward_strategy']}"
        )
        if rec.get("calculator"):
            out.append(f"  calculator tool: template {rec['calculator']['template']} ({rec['calculator']['why']})")
    return out
