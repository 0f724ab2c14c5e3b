"""An unfitted selector says so (as predict does), not AttributeError on None.

Found by mypy: ``self.booster`` is None until fit, and ``to_json`` calls a method on it."""

import pytest

from iobound.errors import InvalidInputError
from search.selection.predictor import GbtSelector


def test_to_json_of_an_unfitted_selector_names_the_cause():
    with pytest.raises(InvalidInputError, match="not fitted"):
        GbtSelector().to_json()
