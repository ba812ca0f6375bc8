"""prime-rl / Hosted Training configs: current key schema, builder, flat-config conversion, validation.

submit_training's entry point is ``submit.run_submit_training(request.SubmitRequest(...), result)``:
the request handed through its stages, build, validate, gate, rehearse (and the token budget,
``tokens``), write, submit (``--status RUN_ID``: ``status.run_status``); ``render.render(result,
console, request)`` draws its human report.

Public API (also used by local_train's prime-rl engine):

- ``build_document(TrainParams(...), template="hosted" | "prime-rl", base=None) -> tomlkit document``
- ``validate_document(plain_dict, text=..., target="hosted" | "prime-rl", ...) -> list[Check]``
- ``convert_flat(plain_flat_dict) -> (document, [KeyMapping])``
- ``schema_info()``: the prime-rl commit and versions the key schema follows.
"""

# Resolved on first use, so that `vlab.hosted.prime` (used by preflight) works without tomlkit installed.
_EXPORTS = {
    "SourceSpec": "builder",
    "TrainParams": "builder",
    "build_document": "builder",
    "load_template": "builder",
    "parse_env_arg": "builder",
    "source_name_for": "builder",
    "KeyMapping": "flat",
    "convert_flat": "flat",
    "looks_flat": "flat",
    "schema_info": "schema",
    "unknown_keys": "schema",
    "Lookup": "validate",
    "parse_strict": "validate",
    "validate_document": "validate",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'vlab.hosted' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"vlab.hosted.{_EXPORTS[name]}"), name)
