"""prime-rl / Hosted Training configs: current key schema, builder, flat-config conversion, validation.

Public API (also used by local_train's prime-rl engine):

- ``build_document(TrainParams(...), template="hosted" | "prime-rl", base=None) -> tomlkit document``
- ``validate_document(plain_dict, text=..., target="hosted" | "prime-rl", ...) -> list[Check]``
- ``convert_flat(plain_flat_dict) -> (document, [KeyMapping])``
- ``schema_info()``: the prime-rl commit and versions the key schema follows.
"""

from .builder import SourceSpec, TrainParams, build_document, load_template, parse_env_arg, source_name_for
from .flat import KeyMapping, convert_flat, looks_flat
from .schema import schema_info, unknown_keys
from .validate import Lookup, parse_strict, validate_document

__all__ = [
    "KeyMapping",
    "Lookup",
    "SourceSpec",
    "TrainParams",
    "build_document",
    "convert_flat",
    "load_template",
    "looks_flat",
    "parse_env_arg",
    "parse_strict",
    "schema_info",
    "source_name_for",
    "unknown_keys",
    "validate_document",
]
