"""Local RL training for verifiers environments (local_train).

config      the TOML schema (prime-rl key names) and CLI overrides
model       device/dtype, offline-first loading, LoRA, weight export, OOM messages
sampler     HF generate / in-process vLLM samplers keeping token ids + logprobs
rollout     Rollout/Turn/Sequence, chat rendering, the RolloutSource seam
envsource   rollouts and scoring through a verifiers environment (vlab.envload)
loss        group advantages and the clipped/masked token-level policy loss
trainer     the step loop, checkpoints that resume exactly, eval
results     eval output in vf-eval's results.jsonl + metadata.json shape
runner      the builtin engine end to end, and its verdict checks
primerl     the prime-rl engine (rl.toml + launch)
"""
