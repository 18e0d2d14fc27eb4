"""`format_table`: a value its column's format cannot print is named."""

import pytest

from keras_subembed import evaluation


def test_a_value_its_format_cannot_print_is_named():
    columns = [("name", "model", "{}"), ("cosine", "cos", "{:.3f}")]
    with pytest.raises(ValueError, match=r"Column 'cosine' of row 1: its format '\{:\.3f\}' "
                                         r"cannot print 'n/a' \("):
        evaluation.format_table([{"name": "a", "cosine": 1.0}, {"name": "b", "cosine": "n/a"}],
                                columns)
    assert evaluation.format_table([{"name": "a", "cosine": 1.0}], columns) == [
        "model  cos", "a      1.000"]
