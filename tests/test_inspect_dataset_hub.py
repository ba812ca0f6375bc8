"""Hub datasets: the hub is mocked (functions replaced, or HF_ENDPOINT at a loopback server)."""

from __future__ import annotations

import json
import socket
import time

import inspect_dataset
import pytest
from conftest import assert_result, run_script
from prime_stub import PrimeStub

from vlab.inspect import hub

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

ROWS = [{"question": f"What is {i} + {i}?", "answer": f"{i} + {i} = {2 * i}\n#### {2 * i}"} for i in range(50)]


class FakeHub:
    """Stands in for the hub calls inspect_dataset makes; records what was asked."""

    def __init__(self, configs=("main",), splits=("train", "test"), rows=ROWS, features=None):
        self.configs, self.splits, self.rows, self.features = list(configs), list(splits), rows, features
        self.calls = []

    def install(self, monkeypatch):
        monkeypatch.setattr(hub, "_dataset_info", lambda repo, timeout: self.calls.append(("info", repo)))
        monkeypatch.setattr(hub, "_config_names", lambda repo: self.calls.append(("configs", repo)) or self.configs)
        monkeypatch.setattr(hub, "_split_names", lambda repo, cfg: self.calls.append(("splits", cfg)) or self.splits)

        def first_rows(repo, cfg, split, n, streaming):
            self.calls.append(("rows", cfg, split, n, streaming))
            return self.rows[:n], self.features, None if streaming else len(self.rows)

        monkeypatch.setattr(hub, "_first_rows", first_rows)
        return self


def run_main(capsys, *args):
    code = inspect_dataset.main([*args, "--json"])
    obj = json.loads(capsys.readouterr().out)
    assert obj["exit_code"] == code
    return assert_result(obj, "inspect_dataset")


@pytest.fixture(autouse=True)
def online(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)


def test_hub_dataset_is_streamed_and_inspected(monkeypatch, capsys):
    fake = FakeHub().install(monkeypatch)
    obj = run_main(capsys, "openai/gsm8k", "--config", "main", "--split", "test", "--sample", "20")
    assert obj["exit_code"] == 0
    assert ("rows", "main", "test", 20, True) in fake.calls  # streaming, only the sample
    data = obj["data"]
    assert data["source"]["kind"] == "hub" and data["source"]["rows_sampled"] == 20
    assert data["answer_format"]["type"] == "gsm8k"
    classic = data["recommendation"]["snippets"]["classic"]
    assert "dataset_path='openai/gsm8k'" in classic and "load_dataset(dataset_path, 'main', split='test')" in classic


def test_several_configs_and_none_given_lists_them_exit_2(monkeypatch, capsys):
    fake = FakeHub(configs=["main", "socratic"]).install(monkeypatch)
    obj = run_main(capsys, "openai/gsm8k")
    assert obj["exit_code"] == 2
    assert "main, socratic" in obj["summary"] and "none was chosen" in obj["summary"]
    assert not [c for c in fake.calls if c[0] == "rows"]  # never picked one


def test_unknown_config_and_split_exit_2(monkeypatch, capsys):
    FakeHub(configs=["main", "socratic"]).install(monkeypatch)
    assert "no config 'nope'" in run_main(capsys, "openai/gsm8k", "--config", "nope")["summary"]
    assert "no split 'dev'" in run_main(capsys, "openai/gsm8k", "--config", "main", "--split", "dev")["summary"]


def test_default_split_is_train_and_said(monkeypatch, capsys):
    FakeHub(configs=[]).install(monkeypatch)
    obj = run_main(capsys, "gsm8k")
    assert obj["exit_code"] == 0 and "split 'train'" in obj["data"]["source"]["notes"]


def test_hub_classlabel_features(monkeypatch, capsys):
    from datasets import ClassLabel, Features, Value

    feats = Features({"sentence": Value("string"), "label": ClassLabel(names=["negative", "positive"])})
    rows = [{"sentence": f"s{i}", "label": i % 2} for i in range(30)]
    FakeHub(configs=["default"], splits=["train"], rows=rows, features=feats).install(monkeypatch)
    obj = run_main(capsys, "stanfordnlp/sst2")
    assert obj["data"]["answer_format"]["type"] == "class_label"
    assert obj["data"]["answer_format"]["labels"] == ["negative", "positive"]


def _raise(err):
    def fn(*args, **kwargs):
        raise err

    return fn


def _hf_error(cls_name, status):
    import httpx
    from huggingface_hub import errors

    response = httpx.Response(status, request=httpx.Request("GET", "https://huggingface.co/api/datasets/x/y"))
    return getattr(errors, cls_name)(f"{status} error", response=response)


@pytest.mark.parametrize(
    "err, code, words",
    [
        (lambda: _hf_error("RepositoryNotFoundError", 401), 2, "no such dataset"),
        (lambda: _hf_error("GatedRepoError", 403), 3, "gated"),
        (lambda: _hf_error("HfHubHTTPError", 503), 4, "unreachable"),
        (lambda: ConnectionError("Couldn't reach 'x/y' on the Hub"), 4, "unreachable"),
    ],
)
def test_hub_errors_map_to_exit_codes(monkeypatch, capsys, err, code, words):
    FakeHub().install(monkeypatch)
    monkeypatch.setattr(hub, "_dataset_info", _raise(err()))
    obj = run_main(capsys, "x/y")
    assert obj["exit_code"] == code and words in obj["summary"]


def test_hub_timeout_is_bounded_exit_4(monkeypatch, capsys):
    FakeHub().install(monkeypatch)
    monkeypatch.setattr(hub, "_first_rows", lambda *a: time.sleep(30))
    start = time.monotonic()
    obj = run_main(capsys, "x/y", "--config", "main", "--timeout", "0.5")
    assert time.monotonic() - start < 5
    assert obj["exit_code"] == 4 and "longer than 0.5s" in obj["summary"]


def test_offline_reads_the_cache_without_the_network(monkeypatch, capsys):
    fake = FakeHub().install(monkeypatch)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    obj = run_main(capsys, "openai/gsm8k", "--config", "main", "--sample", "10")
    assert obj["exit_code"] == 0
    assert not [c for c in fake.calls if c[0] == "info"]
    assert ("rows", "main", "train", 10, False) in fake.calls  # the cached copy, not a stream
    assert obj["data"]["source"]["total_rows"] == len(ROWS)


def test_offline_and_not_cached_exit_4(monkeypatch, capsys):
    FakeHub().install(monkeypatch)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setattr(
        hub, "_config_names", _raise(ConnectionError("Couldn't reach 'x/y' on the Hub (OfflineModeIsEnabled)"))
    )
    obj = run_main(capsys, "x/y")
    assert obj["exit_code"] == 4 and "not in the local cache" in obj["summary"]


def test_local_paths_are_never_hub_ids(tmp_path):
    assert hub.looks_like_hub_id("openai/gsm8k") and hub.looks_like_hub_id("gsm8k")
    assert not hub.looks_like_hub_id("data/train.jsonl") and not hub.looks_like_hub_id("./gsm8k")
    (tmp_path / "owner").mkdir()
    assert not hub.looks_like_hub_id(str(tmp_path / "owner"))


# -- the real libraries against a loopback endpoint (subprocess, no monkeypatching) ------------


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_endpoint_exit_4(tmp_path):
    env = {
        "HF_ENDPOINT": f"http://127.0.0.1:{_closed_port()}",
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "",
        "HF_DATASETS_OFFLINE": "",
    }
    r = run_script("inspect_dataset", "owner/name", "--json", "--timeout", "5", env=env, timeout=60)
    obj = assert_result(r.json, "inspect_dataset", 4)
    assert "unreachable" in obj["summary"] and "Traceback" not in r.stderr


def test_missing_dataset_on_a_stub_endpoint_exit_2(tmp_path):
    with PrimeStub() as stub:  # answers 404 to everything: no such dataset
        env = {
            "HF_ENDPOINT": stub.url,
            "HF_HOME": str(tmp_path / "hf"),
            "HF_HUB_OFFLINE": "",
            "HF_DATASETS_OFFLINE": "",
        }
        r = run_script("inspect_dataset", "owner/missing", "--json", "--timeout", "5", env=env, timeout=60)
        assert any(req["path"].startswith("/api/datasets/owner/missing") for req in stub.requests)
    obj = assert_result(r.json, "inspect_dataset", 2)
    assert "no such dataset" in obj["summary"]


def test_silent_endpoint_is_cut_off_at_the_timeout(tmp_path):
    """A server that accepts connections and never answers: the deadline, not the OS, ends the wait."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(50)
        env = {
            "HF_ENDPOINT": f"http://127.0.0.1:{server.getsockname()[1]}",
            "HF_HOME": str(tmp_path / "hf"),
            "HF_HUB_OFFLINE": "",
            "HF_DATASETS_OFFLINE": "",
        }
        start = time.monotonic()
        r = run_script("inspect_dataset", "owner/name", "--json", "--timeout", "1.5", env=env, timeout=60)
        elapsed = time.monotonic() - start
    obj = assert_result(r.json, "inspect_dataset", 4)
    assert "longer than 1.5s" in obj["summary"] and elapsed < 15


@pytest.mark.parametrize("offline_mode", [False, True])
def test_real_datasets_calls_on_a_local_repo_folder(tmp_path, monkeypatch, offline_mode):
    """The real configs/splits/streaming calls, on a folder `datasets` treats like a hub repo (no network)."""
    import dataset_fixtures as fx

    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    fx.write_jsonl(repo / "data" / "train.jsonl", fx.gsm8k_rows(30))
    fx.write_jsonl(repo / "data" / "test.jsonl", fx.gsm8k_rows(12, seed=5))
    import datasets

    monkeypatch.setattr(hub, "_dataset_info", lambda repo_id, timeout: None)  # the one call that needs the hub API
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")  # keep the user's cache clean
    if offline_mode:
        monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    sample = hub.read_hub(str(repo), 7, split="test", timeout=60)
    assert len(sample.rows) == 7 and sample.columns == ["question", "answer"]
    assert sample.rows[0] == fx.gsm8k_rows(12, seed=5)[0]
    assert sample.total_rows == (12 if offline_mode else None)
    assert set(sample.splits) == {"train", "test"} and sample.splits_from == "the Hub's split list"


# -- splits of Hub-shaped sources: listed, one read (issue 23) -------------------------------


def test_hub_splits_are_listed_and_only_train_is_read(monkeypatch, capsys):
    fake = FakeHub(splits=["train", "validation", "test"]).install(monkeypatch)
    obj = run_main(capsys, "openai/gsm8k", "--config", "main")
    assert obj["exit_code"] == 0
    src = obj["data"]["source"]
    assert src["splits"] == {"train": [], "validation": [], "test": []}
    assert src["splits_from"] == "the Hub's split list" and src["loader"]["split"] == "train"
    assert [c for c in fake.calls if c[0] == "rows"] == [("rows", "main", "train", 300, True)]
    check = {c["id"]: c for c in obj["checks"]}["splits"]
    assert check["status"] == "pass" and "test, train, validation" in check["message"]
    assert "read 'train' only" in check["message"]


def test_hub_test_split_chosen_warns(monkeypatch, capsys):
    FakeHub().install(monkeypatch)
    obj = run_main(capsys, "openai/gsm8k", "--config", "main", "--split", "test")
    assert {c["id"]: c["status"] for c in obj["checks"]}["test-split"] == "warn"


def _card(folder, block: str) -> None:
    (folder / "README.md").write_text(f"---\n{block}---\n# a dataset card\n")


def _rows(tag: str, n: int) -> list[dict]:
    return [{"text": f"{tag} sentence {i}", "label": i % 3} for i in range(n)]


def _inspect(folder, *args):
    env = {"HF_HOME": str(folder.parent / "hf"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    r = run_script("inspect_dataset", str(folder), *args, "--json", env=env)
    assert "Traceback" not in r.stderr
    return r.json


def test_readme_configs_folder_splits_by_its_data_files(tmp_path):
    """File names that say no split: only the card's data_files tell train from test (datasets' own resolution)."""
    import dataset_fixtures as fx

    folder = tmp_path / "card"
    (folder / "files").mkdir(parents=True)
    fx.write_jsonl(folder / "files" / "part_a.jsonl", _rows("train", 20))
    fx.write_jsonl(folder / "files" / "part_b.jsonl", _rows("train", 20))
    fx.write_jsonl(folder / "files" / "holdout.jsonl", _rows("held", 9))
    fx.write_jsonl(folder / "files" / "extra.jsonl", _rows("extra", 5))
    _card(
        folder,
        "configs:\n- config_name: default\n  data_files:\n  - split: train\n    path: files/part_*.jsonl\n"
        "  - split: test\n    path: files/holdout.jsonl\n  - split: dev\n    path: files/extra.jsonl\n",
    )
    obj = assert_result(_inspect(folder), "inspect_dataset", 0)
    src = obj["data"]["source"]
    assert src["splits"] == {
        "train": ["files/part_a.jsonl", "files/part_b.jsonl"],
        "test": ["files/holdout.jsonl"],
        "dev": ["files/extra.jsonl"],
    }
    assert src["splits_from"] == "README.md configs (default)" and src["rows_sampled"] == 40
    assert sorted(src["loader"]["data_files"]) == [str(folder / "files" / f"part_{x}.jsonl") for x in "ab"]
    assert src["loader"]["split"] == "train"
    test = _inspect(folder, "--split", "test")
    assert test["data"]["source"]["loader"]["data_files"] == [str(folder / "files" / "holdout.jsonl")]
    assert test["data"]["source"]["rows_sampled"] == 9
    assert {c["id"]: c["status"] for c in test["checks"]}["test-split"] == "warn"
    assert _inspect(folder, "--split", "dev")["data"]["source"]["rows_sampled"] == 5  # a split named as declared
    bad = assert_result(_inspect(folder, "--split", "nope"), "inspect_dataset", 2)
    assert "no split 'nope'" in bad["summary"] and "dev, test, train" in bad["summary"]


def test_readme_with_several_configs_needs_one(tmp_path):
    import dataset_fixtures as fx

    folder = tmp_path / "card"
    folder.mkdir()
    fx.write_jsonl(folder / "easy.jsonl", _rows("easy", 6))
    fx.write_jsonl(folder / "hard.jsonl", _rows("hard", 4))
    fx.write_jsonl(folder / "hard_eval.jsonl", _rows("hard-eval", 3))
    _card(
        folder,
        "configs:\n- config_name: easy\n  data_files: easy.jsonl\n- config_name: hard\n  data_files:\n"
        "  - split: train\n    path: hard.jsonl\n  - split: test\n    path: hard_eval.jsonl\n",
    )
    none = assert_result(_inspect(folder), "inspect_dataset", 2)
    assert "easy, hard" in none["summary"] and "none was chosen" in none["summary"]
    hard = assert_result(_inspect(folder, "--config", "hard"), "inspect_dataset", 0)["data"]["source"]
    assert hard["splits"] == {"train": ["hard.jsonl"], "test": ["hard_eval.jsonl"]} and hard["rows_sampled"] == 4
    assert hard["splits_from"] == "README.md configs (hard)"
    easy = _inspect(folder, "--config", "easy")["data"]["source"]
    assert easy["splits"] == {"train": ["easy.jsonl"]} and easy["rows_sampled"] == 6


def test_parquet_shards_and_save_to_disk_list_their_splits(tmp_path):
    import datasets

    train, test = datasets.Dataset.from_list(_rows("train", 12)), datasets.Dataset.from_list(_rows("held", 7))
    shards = tmp_path / "shards"
    (shards / "data").mkdir(parents=True)
    train.to_parquet(str(shards / "data" / "train-00000-of-00001.parquet"))
    test.to_parquet(str(shards / "data" / "test-00000-of-00001.parquet"))
    src = assert_result(_inspect(shards), "inspect_dataset", 0)["data"]["source"]
    assert src["splits"] == {
        "train": ["data/train-00000-of-00001.parquet"],
        "test": ["data/test-00000-of-00001.parquet"],
    }
    assert src["loader"]["data_files"] == [str(shards / "data" / "train-00000-of-00001.parquet")]
    assert src["rows_sampled"] == 12
    saved = tmp_path / "saved"
    datasets.DatasetDict({"train": train, "test": test}).save_to_disk(str(saved))
    src = assert_result(_inspect(saved), "inspect_dataset", 0)["data"]["source"]
    assert set(src["splits"]) == {"train", "test"} and src["splits_from"] == "dataset_dict.json"
    assert src["loader"] == {"load_from_disk": str(saved), "split": "train"} and src["rows_sampled"] == 12


def test_uncached_hub_id_offline_is_one_line_exit_4(tmp_path):
    """The real libraries, an empty cache, hub access off: one line and exit 4, no traceback."""
    env = {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    r = run_script("inspect_dataset", "owner/not-cached", "--json", env=env, timeout=60)
    obj = assert_result(r.json, "inspect_dataset", 4)
    assert "not in the local cache" in obj["summary"] and "Traceback" not in r.stderr
    plain = run_script("inspect_dataset", "owner/not-cached", env=env, timeout=60)
    assert plain.returncode == 4 and "Traceback" not in plain.stderr + plain.stdout
