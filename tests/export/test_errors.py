"""The export's own errors are `ValueError`s: whoever handles a bad model or argument
(the command lines print them and exit 2) handles them too."""

import pytest

from keras_subembed.export import ExportVerificationError
from keras_subembed.export import UnsupportedBackendError
from keras_subembed.export import UnsupportedOpError


@pytest.mark.parametrize("error", [ExportVerificationError, UnsupportedOpError,
                                   UnsupportedBackendError])
def test_each_error_is_a_value_error_of_its_own(error):
    with pytest.raises(ValueError, match="the message") as raised:
        raise error("the message")
    assert type(raised.value) is error
    others = {ExportVerificationError, UnsupportedOpError, UnsupportedBackendError} - {error}
    assert not any(isinstance(raised.value, other) for other in others)
