"""Checks that the machine can build, validate and train verifiers environments.

The default profile imports nothing heavy (no torch, vllm or verifiers): it reads
package metadata and files on disk, so it answers in well under a second.
"""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass

from vlab.core import installed as probe
from vlab.core.invocation import (
    command,
    current,
    install_extra,
    install_for_module,
    install_requirements,
    pip_command,
    requirement_name,
    requirements,
)
from vlab.core.result import EXIT_EXTERNAL, EXIT_PREREQ, ExternalError, PrerequisiteError, Result, UsageError
from vlab.hosted.prime import auth_status, prime_path, prime_version

PROFILES = ("env", "hosted", "local-train")


@dataclass(frozen=True)
class PreflightRequest:
    """What preflight is asked: the profile to check for, whether to stay offline, the prime CLI's deadline."""

    profile: str = "env"
    offline: bool = False
    timeout: float = 20.0
    env: str | None = None  # an environment whose generation to report (file, folder, installed, Hub id)

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise UsageError(f"unknown profile {self.profile!r}", hint="one of: " + ", ".join(PROFILES))


PIP_CLASSIC = install_requirements(["verifiers==0.3.1"])
PIP_V1 = install_requirements(["verifiers>=0.4"])
# PyTorch's CPU wheel index: from the default index, Linux torch is the CUDA build (several GB).
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def check_python(result: Result) -> None:
    v = sys.version_info
    data = f"{v.major}.{v.minor}.{v.micro}"
    result.data["python"] = {"version": data, "executable": sys.executable, "platform": platform.platform()}
    if v >= (3, 11):
        result.passed("python", f"Python {data}")
    else:
        result.fail(
            "python",
            f"Python {data} is too old; verifiers needs Python >= 3.11",
            "install Python 3.11+ (for example `uv python install 3.11`) and re-create the venv",
            EXIT_PREREQ,
        )


def check_verifiers(result: Result) -> probe.VerifiersInfo:
    info = probe.verifiers_info()
    result.data["verifiers"] = {"version": info.version, "generations": info.generations}
    if info.version is None:
        result.fail(
            "verifiers",
            "verifiers is not installed",
            f"{PIP_CLASSIC} for classic load_environment() environments, or {PIP_V1} for v1 tasksets",
            EXIT_PREREQ,
        )
        return info
    if not info.generations:
        result.fail(
            "verifiers",
            f"verifiers {info.version} is installed but neither API could be found on disk",
            f"reinstall it: {PIP_CLASSIC}",
            EXIT_PREREQ,
        )
        return info
    names = {"classic": "classic (load_environment, SingleTurnEnv)", "v1": "v1 tasksets (verifiers.v1)"}
    result.passed("verifiers", f"verifiers {info.version}: " + " and ".join(names[g] for g in info.generations))
    if not info.classic:
        result.warn(
            "verifiers-classic",
            f"verifiers {info.version} has no classic API; environments with load_environment() will not load",
            f"for classic environments use a venv with {PIP_CLASSIC} (it also contains verifiers.v1)",
        )
    return info


def check_package(result: Result, dist: str, why: str, required: bool, hint: str | None = None) -> str | None:
    version = probe.package_version(dist)
    result.data.setdefault("packages", {})[dist] = version
    if version:
        result.passed(dist, f"{dist} {version}")
    elif required:
        result.fail(dist, f"{dist} is not installed ({why})", hint or install_for_module(dist), EXIT_PREREQ)
    else:
        result.warn(dist, f"{dist} is not installed ({why})", hint or install_for_module(dist))
    return version


def check_pack_dependencies(result: Result) -> None:
    """The pack's own core requirements (verifiers and datasets have their own checks)."""
    reqs = [r for r in requirements().get(None, []) if requirement_name(r) not in ("verifiers", "datasets")]
    missing = [r for r in reqs if probe.package_version(requirement_name(r)) is None]
    if missing:
        names = ", ".join(requirement_name(r) for r in missing)
        result.fail(
            "pack-dependencies",
            f"verifiers-lab's own dependencies are missing: {names} (every script but this one needs them)",
            install_requirements(missing),
            EXIT_PREREQ,
        )
    elif reqs:
        result.passed("pack-dependencies", f"verifiers-lab's dependencies: {len(reqs)} installed")


def check_uv(result: Result, required: bool) -> None:
    path = probe.which("uv")
    result.data.setdefault("commands", {})["uv"] = path
    why = "needed by `prime env install` and prime-rl"
    hint = f"{install_requirements(['uv'])}  (or see https://docs.astral.sh/uv/)"
    if path:
        result.passed("uv", f"uv found at {path}")
    elif required:
        result.fail("uv", f"uv is not on PATH ({why})", hint, EXIT_PREREQ)
    else:
        result.warn("uv", f"uv is not on PATH ({why})", hint)


def check_prime(result: Result, required: bool, offline: bool, timeout: float) -> None:
    commands = result.data.setdefault("commands", {})
    path = prime_path()
    commands["prime"] = path
    if current().pip:  # installed with pip: the pack's own extra brings prime
        hint = f"{install_extra('hosted')}  (verifiers-lab's `hosted` extra; or `uv tool install prime`), then `prime login`"
    else:  # a skill folder (npx skills add, a clone): no package to extend; prime is a tool of its own
        wanted = [r for r in requirements().get("hosted", []) if requirement_name(r) == "prime"] or ["prime"]
        hint = f"{install_requirements(wanted)}  (or `uv tool install prime`), then `prime login`"
    if not path:
        if required:
            result.fail("prime-cli", "the prime CLI is not on PATH", hint, EXIT_PREREQ)
        else:
            result.warn(
                "prime-cli", "the prime CLI is not on PATH (needed to push environments and for Hosted Training)", hint
            )
        return
    try:
        version = prime_version(timeout)
    except PrerequisiteError as err:
        result.fail("prime-cli", f"prime at {path} did not run: {err.message}", hint, EXIT_PREREQ)
        return
    except ExternalError as err:  # installed, but it hangs: a timeout, not a missing CLI
        result.fail(
            "prime-cli",
            f"prime at {path} is installed but timed out: {err.message}",
            f"run `prime --version` yourself to see where it hangs; raise --timeout (now {timeout:g} s) "
            "on a slow machine",
            EXIT_EXTERNAL,
        )
        return
    result.data["prime_version"] = version
    if version and probe.version_tuple(version) < (0, 13):
        result.fail(
            "prime-cli",
            f"prime {version} is too old: Hosted Training needs prime >= 0.13 (prime-rl configs)",
            f"{pip_command()} install -U prime",
            EXIT_PREREQ,
        )
    else:
        result.passed("prime-cli", f"prime {version or '(unknown version)'} at {path}")
    if not required:
        return
    if offline:
        result.skip("prime-auth", "login not checked (--offline)")
        result.data["auth"] = "skipped"
        return
    status = auth_status(timeout)
    result.data["auth"] = status.state
    if status.exit_code == 0:
        result.passed("prime-auth", status.message)
    else:
        result.fail("prime-auth", status.message, status.hint, status.exit_code)


def check_torch_and_gpus(result: Result) -> None:
    torch_version = check_package(
        result,
        "torch",
        "local training",
        required=True,
        hint=f"{install_extra('train')}  (no GPU: first {pip_command()} install torch --index-url {TORCH_CPU_INDEX})",
    )
    check_package(result, "transformers", "local training", required=True)
    check_package(result, "peft", "LoRA in local training", required=False)
    gpus: list[dict] = []
    result.data["gpus"] = gpus
    if not torch_version:
        return
    try:
        import torch  # the local-train profile is allowed to pay for this import

        if torch.cuda.is_available():
            for i in range(torch.cuda.device_count()):
                props = torch.cuda.get_device_properties(i)
                gpus.append({"index": i, "name": props.name, "memory_gib": round(props.total_memory / 2**30, 1)})
    except Exception as err:  # a broken CUDA install is a finding, not a crash
        result.fail("gpu", f"torch could not query CUDA: {err}", "reinstall torch for your CUDA version", EXIT_PREREQ)
        return
    if gpus:
        listing = ", ".join(f"{g['index']}: {g['name']} ({g['memory_gib']} GiB)" for g in gpus)
        result.passed("gpu", f"{len(gpus)} CUDA GPU(s): {listing}")
        if len(gpus) < 2:
            result.warn(
                "gpu-count",
                "one GPU: the built-in trainer works; prime-rl's full stack needs 2 (1 inference + 1 trainer)",
                f"use `{command('local_train')} --engine builtin`, or Hosted Training",
            )
    else:
        result.warn(
            "gpu",
            "no CUDA GPU found: the built-in trainer runs on CPU with tiny models only",
            "train on a machine with a GPU, or use Hosted Training (`--for hosted`)",
        )


def check_vllm(result: Result) -> None:
    version = probe.package_version("vllm")
    result.data.setdefault("packages", {})["vllm"] = version
    if not version:
        result.warn(
            "vllm",
            "vLLM is not installed: local training samples with Hugging Face generate (slower)",
            f"on a CUDA machine: {install_extra('vllm')} (it installs the torch its release pins)",
        )
        return
    pin = probe.requirement_of("vllm", "torch")
    torch_version = probe.package_version("torch")
    result.data["vllm_torch_requirement"] = pin
    if pin and torch_version and "==" in pin:
        wanted = pin.split("==", 1)[1].split(";")[0].strip().split(",")[0]
        if probe.version_tuple(wanted) != probe.version_tuple(torch_version.split("+")[0]):
            result.fail(
                "vllm",
                f"vLLM {version} pins {pin} but torch {torch_version} is installed; vLLM will not import",
                f"{install_requirements([f'torch=={wanted}'])} (or a vLLM release built for torch {torch_version})",
                EXIT_PREREQ,
            )
            return
    if probe.package_dir("vllm") is None:
        result.fail(
            "vllm",
            f"vLLM {version} metadata is present but the package cannot be found",
            f"{pip_command()} install --force-reinstall vllm",
            EXIT_PREREQ,
        )
        return
    result.passed("vllm", f"vLLM {version} (torch requirement: {pin or 'none declared'})")


def check_env_generation(result: Result, spec: str, profile: str, offline: bool, timeout: float) -> None:
    """--env: the environment's generation; for --for hosted a classic one fails (Hosted runs v1 only)."""
    from vlab.env.generation import CLASSIC, detect
    from vlab.hosted.gate import generation_check

    finding = detect(spec, online=not offline, timeout=timeout)
    result.data["env_generation"] = finding.to_dict()
    if profile == "hosted":
        result.checks.append(generation_check(finding, "environment", "hosted", None))
    elif finding.generation == CLASSIC:
        result.passed(
            "env-generation", f"{spec} is a classic environment ({finding.because()}); runs with verifiers 0.3.1"
        )
    elif finding.known:
        result.passed("env-generation", f"{spec} is a v1 taskset ({finding.because()})")
    else:
        result.warn("env-generation", f"{spec}: generation unknown ({finding.because()})")


def run_preflight(request: PreflightRequest, result: Result) -> None:
    profile, offline, timeout = request.profile, request.offline, request.timeout
    result.data["profile"] = profile
    result.data["offline"] = offline
    check_python(result)
    info = check_verifiers(result)
    # datasets is what classic environments are built from, and what inspect_dataset reads.
    check_package(result, "datasets", "classic environments and inspect_dataset read data with it", required=True)
    check_pack_dependencies(result)
    check_uv(result, required=False)
    check_prime(result, required=(profile == "hosted"), offline=offline, timeout=timeout)
    if profile == "local-train":
        check_torch_and_gpus(result)
        check_vllm(result)
    if request.env:
        check_env_generation(result, request.env, profile, offline, timeout)
    failed = [c for c in result.checks if c.status == "fail"]
    if failed:
        result.summary = f"{len(failed)} problem(s) to fix before going on"
        for c in failed:
            if c.hint:
                result.step(c.hint)
    else:
        gens = "/".join(info.generations) or "none"
        result.summary = f"ready for profile '{profile}' (verifiers {info.version}, API: {gens})"
        result.step(f"{command('inspect_dataset')} DATASET --json")
