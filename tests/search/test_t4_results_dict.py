"""search/t4_results.py's conversion and metadata look-ups, checked against the format.

References: the T4 results layout and the invalidity -> Kernel Tuner ``time`` table in
the module doc, rebuilt here by a plain loop over the results (first result of a
configuration kept, each parameter's values sorted), and the metadata file naming
rule (``NAME-results.json[.gz]`` -> ``NAME-metadata.json[.gz]``, ``_`` alike).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from iobound.errors import InvalidInputError
from search.kt_cache import load_cache
from search.t4_results import (T4_FAILURE, as_cache_dict, is_t4_results, metadata_device,
                               metadata_file, query_device)

KT_TIME = {"correct": None, **T4_FAILURE}


@st.composite
def t4_results(draw):
    """A T4 results list: configurations over two parameters (repeats allowed), each
    correct (with a time among other measurements and junk entries) or failed; the
    invalidity of a correct one sometimes left out, as it defaults to correct."""
    names = draw(st.permutations(["by", "bx"]))
    out = []
    for _ in range(draw(st.integers(1, 8))):
        config = {n: draw(st.sampled_from([1, 2, 16, 4])) for n in names}
        bad = draw(st.sampled_from(sorted(KT_TIME)))
        result = {"configuration": config, "invalidity": bad, "measurements": []}
        if bad == "correct":
            result["measurements"] = [{"name": "GB/s", "value": 9.0}, "junk", None,
                                      {"name": "time", "value": draw(st.floats(0.01, 10.0)),
                                       "unit": "ms"}]
            if draw(st.booleans()):
                del result["invalidity"]
        out.append(result)
    out[0]["objectives"] = draw(st.sampled_from([["time"], ["GFLOP/s", "time"]]))
    return out


def _reference(results: list) -> dict:
    keys = list(results[0]["configuration"])
    cache: dict = {}
    for r in results:
        config = r["configuration"]
        key = ",".join(str(config[k]) for k in keys)
        if key in cache:
            continue
        bad = r.get("invalidity", "correct")
        time = KT_TIME[bad] or next(m["value"] for m in r["measurements"]
                                     if isinstance(m, dict) and m["name"] == "time")
        cache[key] = {**config, "time": time}
    return {"tune_params_keys": keys, "objective": results[0]["objectives"][0],
            "tune_params": {k: sorted({r["configuration"][k] for r in results}) for k in keys},
            "cache": cache}


@settings(max_examples=60, deadline=None)
@given(t4_results())
def test_as_cache_dict_is_the_cache_the_results_describe(results):
    raw = {"schema_version": "1.0.0", "results": results}
    assert is_t4_results(raw)
    got = as_cache_dict(raw, "f.json")
    want = _reference(results)
    assert {k: got[k] for k in want} == want
    assert list(got["cache"]) == list(want["cache"])  # in the order the results show them
    assert got["t4_schema_version"] == "1.0.0"
    assert (got["device_name"], got["kernel_name"], got["problem_size"]) == ("", "", None)


def test_values_of_mixed_types_keep_the_order_the_results_show():
    raw = {"results": [{"configuration": {"a": v}, "invalidity": "constraints"}
                       for v in ("x", 2, "x", 1)]}
    assert as_cache_dict(raw, "f.json")["tune_params"] == {"a": ["x", 2, 1]}


@pytest.mark.parametrize("raw, t4", [
    ({"results": []}, True), ({"results": [], "cache": {}}, False), ({"cache": {}}, False),
    ({"results": {}}, False), ([{"results": []}], False), ({"results": "x"}, False)])
def test_is_t4_results_is_a_results_list_without_a_cache(raw, t4):
    """A Kernel Tuner cache that also holds a ``results`` list is still a cache."""
    assert is_t4_results(raw) is t4


def test_a_cache_holding_a_results_list_loads_as_a_cache(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"device_name": "d", "kernel_name": "k", "problem_size": [8],
                                "tune_params_keys": ["x"], "tune_params": {"x": [1, 2]},
                                "cache": {"1": {"x": 1, "time": 1.0}, "2": {"x": 2, "time": 2.0}},
                                "results": []}))
    assert load_cache(path).tune_params == {"x": [1, 2]}


@pytest.mark.parametrize("results, said", [
    ([{"configuration": {}}], "result 0 has no 'configuration'"),
    (["x"], "result 0 has no 'configuration'"),
    ([{"configuration": {"a": 1}, "invalidity": "constraints"}, {"configuration": {}}],
     "result 1 has no 'configuration'"),
    ([{"configuration": {"a": 1}, "invalidity": "constraints"},
      {"configuration": {"b": 1}, "invalidity": "constraints"}], "result 1 has parameters"),
])
def test_a_result_without_the_first_ones_parameters_is_refused(results, said):
    with pytest.raises(InvalidInputError, match=said):
        as_cache_dict({"results": results}, "f.json")


@pytest.mark.parametrize("results_name, meta_name", [
    ("a6000-results.json", "a6000-metadata.json"), ("a6000_results.json", "a6000_metadata.json"),
    ("a6000-results.json.gz", "a6000-metadata.json.gz"),
    ("a6000_results.json.gz", "a6000_metadata.json"), ("a6000-results", "a6000-metadata.json")])
def test_metadata_file_is_found_beside_its_results(tmp_path, results_name, meta_name):
    (tmp_path / meta_name).write_text("{}")
    assert metadata_file(tmp_path / results_name) == tmp_path / meta_name


@pytest.mark.parametrize("results_name", ["a6000.json", "a6000-result.json", "results.json"])
def test_metadata_file_needs_a_results_name_and_a_metadata_file(tmp_path, results_name):
    (tmp_path / "a6000-metadata.json").write_text("{}")
    (tmp_path / "metadata.json").write_text("{}")
    assert metadata_file(tmp_path / results_name) is None


@pytest.mark.parametrize("query, name", [
    ({"nvidia_smi_log": {"gpu": {"product_name": " NVIDIA A100 "}}}, "NVIDIA A100"),
    ({"nvidia_smi_log": {"gpu": [{"product_name": "A"}, {"product_name": "A"}]}}, "A"),
    ({"nvidia_smi_log": {"gpu": [{"product_name": "A"}, {"product_name": "B"}]}}, ""),
    ({"nvidia_smi_log": {"gpu": [{"product_name": "A"}, {"other": "A"}]}}, ""),
    ({"nvidia_smi_log": {"gpu": [{"product_name": "  "}]}}, ""),
    ({"nvidia_smi_log": {"gpu": []}}, ""),
    ({"nvidia_smi_log": {"gpu": "A"}}, ""),
    ({"Card0": {"Device Name": "MI100"}, "CARD1": {"device name": "MI100"}, "system": {}}, "MI100"),
    ({"card0": {"Card series": "MI250X", "Device Name": "other"}}, "MI250X"),
    ({"card0": {"Device Name": "MI100"}, "card1": {"Device Name": "MI250X"}}, ""),
    ({"system": {"Device Name": "MI100"}}, ""), ({}, ""), ([], ""), (None, "")])
def test_query_device_is_the_one_name_every_gpu_has(query, name):
    assert query_device(query) == name


def test_metadata_device_reads_the_metadata_file_and_ignores_a_broken_one(tmp_path):
    results = tmp_path / "run-results.json"
    meta = tmp_path / "run-metadata.json"
    meta.write_text(json.dumps({"metadata": {"environment": {"device_query": {
        "nvidia_smi_log": {"gpu": {"product_name": "NVIDIA RTX A6000"}}}}}}))
    assert metadata_device(results) == "NVIDIA RTX A6000"
    meta.write_text("{not json")
    assert metadata_device(results) == ""
    meta.unlink()
    assert metadata_device(results) == ""
