"""search/cli/common.py output helpers, found unchecked by mutation testing. Reference:
README.md ("--json output is strict JSON (no NaN/Infinity tokens)"), checked with a strict
``json.loads`` that refuses those tokens."""

import argparse
import json
import math

import pytest

from search.cli.common import print_result


def _strict_loads(text):
    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")
    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_print_result_json_is_strict(capsys, value):
    data = {"ratio": value, "rows": [1.5, value, {"x": value}], "pair": (value, 2)}
    print_result(argparse.Namespace(json=True), data, lambda: "text")
    assert _strict_loads(capsys.readouterr().out) == {"ratio": None, "rows": [1.5, None, {"x": None}],
                                                       "pair": [None, 2]}


def test_print_result_text_without_json(capsys):
    print_result(argparse.Namespace(json=False), {"a": 1}, lambda: "the table")
    assert capsys.readouterr().out == "the table\n"
