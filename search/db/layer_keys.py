"""The ``layer`` strings of history keys (:class:`search.history.HistoryKey`, and the
version-0 database's ``layer`` column) and the workloads they name, both ways.

A layer of our conv template is its JSON; a replayed Kernel Tuner space is
``replay:KERNEL:PROBLEM``.

>>> w = layer_key_workload(replay_layer_key("conv", [64, 64]), ("x", "y"))
>>> (w.template, w.problem), workload_layer_key(w)
(('conv', [64, 64]), 'replay:conv:[64, 64]')
"""

from __future__ import annotations

import json
from typing import Any

from iobound.errors import InvalidInputError

from ..option_checks import check_type, shown
from .conv_template import CONV_TEMPLATE
from .model import Workload, problem_fault, recorded_workload

__all__ = ["conv_layer_key", "replay_layer_key", "layer_key_workload", "workload_layer_key"]


def conv_layer_key(problem: dict) -> str:
    """The history key string of a layer of our conv template: its dict (``ConvLayer.to_dict``,
    or a stored workload's problem) as JSON, keys sorted: the one spelling both sides use,
    since a key spelt otherwise would orphan the history stored under it.

    >>> conv_layer_key({"n": 1, "c_in": 4})
    '{"c_in": 4, "n": 1}'
    """
    check_type("problem", problem, dict)
    return _problem_json(problem)


def _problem_json(problem: Any) -> str:
    """``problem`` as a key's JSON (keys sorted); one a workload could not hold (a set, an
    object, NaN: :func:`~.model.problem_fault`) is InvalidInputError naming ``problem``."""
    try:
        text = json.dumps(problem, sort_keys=True)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidInputError(f"problem must be a JSON value (numbers, strings, lists, "
                                f"dicts), got {shown(problem)}: {exc}") from None
    fault = problem_fault(problem)
    if fault:
        raise InvalidInputError(f"problem {shown(problem)} {fault}")
    return text


def replay_layer_key(kernel: str, problem: Any) -> str:
    """The history key string of a recorded (replayed) space: ``replay:KERNEL:PROBLEM``.

    PROBLEM is the problem as JSON (keys sorted) and KERNEL the kernel name, written as
    a JSON string when it holds ``:`` (C++ ``ns::conv``) or starts with ``"``, so that
    :func:`layer_key_workload` splits it back exactly. For a plain name and a list of
    integers this is the key earlier versions wrote.

    >>> replay_layer_key("conv", [64, 64]), replay_layer_key("ns::conv", ["fp16", 64])
    ('replay:conv:[64, 64]', 'replay:"ns::conv":["fp16", 64]')
    """
    check_type("kernel", kernel, str)
    name = json.dumps(kernel) if ":" in kernel or kernel.startswith('"') else kernel
    return f"replay:{name}:{_problem_json(problem)}"


def layer_key_workload(layer: str, params) -> Workload:
    """The workload of a history key's ``layer`` string (:class:`search.history.HistoryKey`).

    ``replay:KERNEL:PROBLEM`` (a replayed cache file, :func:`replay_layer_key`) gives
    template KERNEL (a JSON string there, or the text up to the first ``:``) and the
    problem parsed as JSON where it is JSON; a JSON object (a layer) gives
    :data:`CONV_TEMPLATE`; anything else is kept whole as the problem of template ``""``.

    >>> layer_key_workload('replay:"ns::conv":[64, 64]', ("x",)).template
    'ns::conv'
    """
    check_type("layer", layer, str)
    if layer.startswith("replay:"):
        kernel, problem = _split_replay(layer[len("replay:"):])
        return recorded_workload(kernel, _json_or_text(problem), params)
    parsed = _json_or_text(layer)
    if isinstance(parsed, dict):
        return Workload(CONV_TEMPLATE, parsed, params)
    return Workload("", layer, params)


def _split_replay(rest: str) -> tuple[str, str]:
    """(kernel, problem text) of a replay key after ``replay:``; a kernel name written as
    a JSON string is read as one, any other ends at the first ``:`` (as it always did)."""
    if rest.startswith('"'):
        try:
            kernel, end = json.JSONDecoder().raw_decode(rest)
        except json.JSONDecodeError:
            kernel, end = None, 0
        if isinstance(kernel, str) and rest[end:end + 1] == ":":
            return kernel, rest[end + 1:]
    kernel, _, problem = rest.partition(":")
    return kernel, problem


def workload_layer_key(w: Workload) -> str:
    """Inverse of :func:`layer_key_workload` (the ``layer`` string the tune CLI uses): a
    layer's JSON, a string problem of template ``""`` that reads back as itself, else the
    :func:`replay_layer_key` of the template and problem.

    >>> workload_layer_key(Workload(CONV_TEMPLATE, {"n": 1, "c_in": 4}, ("x",)))
    '{"c_in": 4, "n": 1}'
    >>> workload_layer_key(Workload("", "L", ("x",)))  # a version-0 key kept whole
    'L'
    """
    check_type("w", w, Workload)
    if w.template == CONV_TEMPLATE and isinstance(w.problem, dict):
        return conv_layer_key(w.problem)
    if w.template == "" and isinstance(w.problem, str) and \
            layer_key_workload(w.problem, w.params) == w:
        return w.problem
    return replay_layer_key(w.template, w.problem)


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
