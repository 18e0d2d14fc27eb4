"""The TensorFlow process's side of `tensorflow_process.run_export`."""

import pathlib
import pickle
import sys

from keras_subembed import export


def serve_request(request, response):
    """The child's side: run the export, pickle its result or its error."""
    function_name, kwargs = pickle.loads(pathlib.Path(request).read_bytes())
    if isinstance(kwargs.get("representative_dataset"), list):
        samples = kwargs["representative_dataset"]
        kwargs["representative_dataset"] = lambda: iter(samples)
    try:
        outcome = (True, getattr(export, function_name)(**kwargs))
    except Exception as error:
        outcome = (False, error)
    try:
        data = pickle.dumps(outcome)
    except Exception:  # an error that does not pickle comes back as its text
        data = pickle.dumps((False, RuntimeError(f"{type(outcome[1]).__name__}: {outcome[1]}")))
    pathlib.Path(response).write_bytes(data)


if __name__ == "__main__":
    serve_request(*sys.argv[1:])
