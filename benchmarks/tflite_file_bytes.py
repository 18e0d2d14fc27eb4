"""Where a `.tflite` file's bytes go: the token table, the transformer's layers, the position
table, every other stored array, and what lies outside the arrays (quantization scales and
zero points, the graph, signatures, metadata).

Each array is counted once, by its buffer, and grouped by the first tensor that reads it
(names come from the Keras layers: `token_embedding`, `feedforward`, `attention`...). It
reads the flatbuffer only, so it runs on any file, and in seconds.

    python benchmarks/tflite_file_bytes.py shrunk/product-k32m256.int4_dynamic.tflite
"""

import argparse
import collections
import pathlib

from keras_subembed.tflite_metadata import tflite_schema

GROUPS = (("token table", ("token_embedding",)),
          ("feed-forward layers", ("feedforward",)),
          ("attention layers", ("attention", "query", "key", "value")),
          ("position table", ("position_embedding",)))


def group_of(name):
    for group, parts in GROUPS:
        if any(part in name for part in parts):
            return group
    return "other arrays"


def file_bytes(path):
    """`{group: bytes}` of the file at `path`, with `outside arrays` and `file` totals."""
    data = pathlib.Path(path).read_bytes()
    schema = tflite_schema()
    model = schema.Model.GetRootAs(data, 0)
    # A buffer lives inside the flatbuffer (`Data`) or, past 2 GB-style layouts, at an offset.
    sizes = [buffer.Size() if buffer.Offset() > 1 else buffer.DataLength()
             for buffer in (model.Buffers(index) for index in range(model.BuffersLength()))]
    kinds = {value: key for key, value in vars(schema.TensorType).items()
             if not key.startswith("_")}
    groups, seen = collections.Counter(), set()
    for graph in (model.Subgraphs(index) for index in range(model.SubgraphsLength())):
        for tensor in (graph.Tensors(index) for index in range(graph.TensorsLength())):
            buffer = tensor.Buffer()
            if buffer in seen or not sizes[buffer]:
                continue
            seen.add(buffer)
            groups[f"{group_of(tensor.Name().decode())} ({kinds[tensor.Type()].lower()})"] += \
                sizes[buffer]
    groups["outside arrays"] = len(data) - sum(sizes)
    groups["file"] = len(data)
    return dict(groups)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=pathlib.Path)
    args = parser.parse_args(argv)
    for path in args.files:
        groups = file_bytes(path)
        print(f"{path}:")
        for group, size in sorted(groups.items(), key=lambda item: -item[1]):
            if group != "file":
                print(f"  {group:36s} {size / 1e6:8.3f} MB  {100 * size / groups['file']:5.1f}%")
        print(f"  {'file':36s} {groups['file'] / 1e6:8.3f} MB")


if __name__ == "__main__":
    main()
