"""`keras-subembed-convert`: .keras model -> SavedModel and/or verified .tflite."""

import argparse
import json
import os
import pathlib
import sys


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="keras-subembed-convert", description=__doc__)
    parser.add_argument("model", help="a .keras model file")
    parser.add_argument("--tflite", help="write a .tflite file here")
    parser.add_argument("--saved-model", help="write a SavedModel folder here")
    parser.add_argument("--quantization", choices=["none", "dynamic", "float16", "int8"],
                        default="none")
    parser.add_argument("--embedding-mode", choices=["compressed", "frozen"], default="compressed",
                        help="keep ALONE/DeFINE computed (small) or freeze them to a table (fast)")
    parser.add_argument("--overwrite", action="store_true", help="replace existing outputs")
    parser.add_argument("--no-verify", action="store_true", help="skip the LiteRT parity check")
    parser.add_argument("--json", help="also write the report as JSON here")
    args = parser.parse_args(argv)
    if not args.tflite and not args.saved_model:
        parser.error("give --tflite and/or --saved-model")
    return args


def write_vocabulary(model, tflite_path, overwrite):
    """Save the model's WordPiece vocabulary beside the .tflite, for the app."""
    tokenizer = getattr(getattr(model, "preprocessor", None), "tokenizer", None)
    vocabulary = getattr(tokenizer, "vocabulary", None)
    if not vocabulary:
        return None
    path = pathlib.Path(tflite_path).with_suffix(".vocab.txt")
    if path.exists() and not overwrite:
        raise FileExistsError(f"{str(path)!r} exists; pass --overwrite to replace it.")
    path.write_text("\n".join(vocabulary) + "\n", encoding="utf-8")
    return path


def calibration_data(model):
    """A representative dataset for int8: sample inputs at a few lengths."""
    from keras_subembed.export.tflite import make_sample_inputs

    samples = make_sample_inputs(model, [16, 64, 128], batch_size=1)

    def representative():
        for sample in samples * 10:
            yield sample

    return representative


def main(argv=None):
    args = parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from keras_subembed.export.saved_model import export_saved_model
    from keras_subembed.export.saved_model import load_model
    from keras_subembed.export.tflite import export_tflite

    try:
        model = load_model(args.model)
        if args.saved_model:
            path = export_saved_model(model, args.saved_model, embedding_mode=args.embedding_mode,
                                      overwrite=args.overwrite)
            print(f"wrote SavedModel {path}")
        if args.tflite:
            quantization = None if args.quantization == "none" else args.quantization
            representative = calibration_data(model) if quantization == "int8" else None
            report = export_tflite(model, args.tflite, quantization=quantization,
                                   representative_dataset=representative,
                                   embedding_mode=args.embedding_mode,
                                   verify=not args.no_verify, overwrite=args.overwrite)
            print(report)
            vocabulary = write_vocabulary(model, args.tflite, args.overwrite)
            if vocabulary:
                print(f"vocabulary     {vocabulary}")
            if args.json:
                pathlib.Path(args.json).write_text(json.dumps(report.as_dict(), indent=2))
    except (ValueError, TypeError, FileNotFoundError, FileExistsError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
