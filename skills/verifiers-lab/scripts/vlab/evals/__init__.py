"""check_reward_distribution: read eval outputs of every shape and judge whether training is worth starting.

The modules, in the order the data flows:

- ``source``: locate the results (a file, a run folder, or the newest run found), decide their
  shape, read the run's metadata (``EvalSource``, ``RunMetadata``).
- ``fields``: one field of a row normalised (reward, score, completion size, error, prompt key),
  shared by both readers.
- ``read``: stream the rollouts of every shape as one typed record (``EvalRow``), with ``ReadStats``
  of what was skipped.
- ``chunks``: a file as chunks of whole lines (``line_chunks``: a plain file is mapped, not copied) and byte ranges.
- ``batches``, ``v1batches``: the fast msgspec column readers of classic shapes and of v1 traces, a chunk at a time;
  each falls back to ``read`` for a chunk it cannot take.
- ``columns``: rollouts as compact array columns (``Columns``), collected in parallel for big files.
- ``stats``: distributions, inferred weights, GRPO group statistics and pass@k as frozen records.
- ``analysis``: the frozen ``Analysis`` of a run, and which function is correctness
  (``function_kind``, ``correctness_function``).
- ``verdicts``: ``Thresholds`` (the one home of every threshold; SKILL.md quotes some), ``judge_input``, ``judge``.
- ``recommend``: prime-rl settings from the same figures; the group size its table supports.
- ``validate``: vf-validate output (its rows as ``ValidateRow``), its analysis and verdicts.
- ``render``: the human report of the figures.
- ``check``: the entry point, ``check_reward_distribution(CheckRequest, Result)``.
"""
