"""Dataset reading and role/format detection (reused by new_env).

Library API:
  read_sample(source, n, split, config, timeout) -> Sample     the first rows, bounded cost
  analyse(sample, prompt_column, answer_column) -> dict        the stable ``data`` shape:
      source, columns, roles{prompt,answer,choices,info: {column, confidence, reason}},
      answer_format{type, label, match_share, extraction, ...},
      recommendation{template (v1 unless verifiers 0.3.x is installed), generation, why, templates, parser, reward_strategy, column_mapping, snippets{classic, v1}}
  inspect_dataset(InspectRequest(source, ...), result)         both, plus the checks on a Result
  render(result, console, request)                             the human report (vlab.inspect.render)
"""

from vlab.inspect.analysis import InspectRequest, analyse, inspect_dataset, read_sample
from vlab.inspect.formats import FORMAT_LABELS, detect_answer_format
from vlab.inspect.recommend import recommend
from vlab.inspect.roles import CONFIDENT, detect_roles
from vlab.inspect.sample import DEFAULT_SAMPLE, Sample
from vlab.kinds.number.values import parse_number

__all__ = [
    "FORMAT_LABELS",
    "CONFIDENT",
    "DEFAULT_SAMPLE",
    "InspectRequest",
    "Sample",
    "analyse",
    "detect_answer_format",
    "detect_roles",
    "inspect_dataset",
    "parse_number",
    "read_sample",
    "recommend",
]
