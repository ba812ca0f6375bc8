"""test_reward: probe completions for a reward and judge the scores, per answer kind, then check the whole dataset.

Entry point: ``checks.run_test_reward(TestRewardRequest(...), result)``; human report: ``render.render``.

Modules:
  checks       the run: load, two probe phases on the probed rows, the pass over every row
  probes       generic probes (gold in every format, wrong, malformed, hacks), user files, verdict helpers
  kinds        which answer kind a row asks for (code, choice, number, text) and the options its prompt shows
  numbers      equal spellings and near misses of a numeric gold (checked with math-verify, ``equivalence``)
  choices      every option label the prompt shows, and the forms of the gold's label
  code         the reference program raw and fenced, broken programs, programs that game the tests
  prompts      what the prompt must show: options under the key's labels, the function name, passages
  labels       class labels: the label space the prompt offers, golds inside it, probes with every real label
  validate     the taskset's own validate() on the checked rows (what vf-validate runs)
  dataset      empty golds, conflicting duplicates, golds outside the options; gold reachability on every row
  verdicts     gold on top, margin, variation, format, hacking, determinism
  scoreboard   mean reward per probe family (close-to-gold marked), state leaking between rows, one constant answer
  health       finite values, swallowed exceptions, hangs and slowness
  files        --custom cases and --completions with labels
  judge        judge-scored rewards (--judge stub / --judge-base-url): injection probes, verdict forms, cost
  judge_server the loopback judge: the deterministic stub judge, or a counting proxy to a real endpoint
  conversation scripted conversations (real tool calls) through a multi-turn or tool environment's rollout loop
"""
