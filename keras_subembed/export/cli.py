"""`keras-subembed-convert`: .keras model -> SavedModel and/or verified .tflite."""

import argparse
import sys

from keras_subembed import files
from keras_subembed.export import tensorflow_process
from keras_subembed.export.model_parts import EMBEDDING_MODES
from keras_subembed.export.model_parts import load_model
from keras_subembed.export.saved_model import export_saved_model
from keras_subembed.export.signature import ServingInputs
from keras_subembed.export.signature import make_sample_inputs
from keras_subembed.export.tflite.tflite_format import QUANTIZATIONS
from keras_subembed.export.tflite.tflite_format import export_tflite
from keras_subembed.export.tokenizer_file import TokenizerFile
from keras_subembed.optional import ai_edge_quantizer
from keras_subembed.quantization.recipes import RECIPE_NAMES


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="keras-subembed-convert", description=__doc__)
    parser.add_argument("model", help="a .keras model file")
    parser.add_argument("--tflite", help="write a .tflite file here")
    parser.add_argument("--saved-model", help="write a SavedModel folder here")
    parser.add_argument("--quantization", default="none",
                        choices=[q or "none" for q in QUANTIZATIONS])
    parser.add_argument("--embedding-mode", choices=EMBEDDING_MODES, default=EMBEDDING_MODES[0],
                        help="keep ALONE/DeFINE computed (small) or freeze them to a table (fast)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace outputs a previous export wrote (never other files)")
    parser.add_argument("--no-verify", action="store_true", help="skip the LiteRT parity check")
    parser.add_argument("--latency-runs", type=int, default=0,
                        help="time this many runs of one sequence (default: no timing)")
    parser.add_argument("--json", help="also write the report as JSON here")
    args = parser.parse_args(argv)
    if not args.tflite and not args.saved_model:
        parser.error("give --tflite and/or --saved-model")
    if args.json and not args.tflite:
        parser.error("--json writes the .tflite report; give --tflite too")
    return args


def calibration_data(model):
    """A representative dataset for int8: sample inputs at a few lengths."""
    samples = make_sample_inputs(model, ServingInputs.of(model), [16, 64, 128], batch_size=1)

    def representative():
        for sample in samples * 10:
            yield sample

    return representative


def check_outputs(args, tokenizer):
    """Check every output before writing any: none is the input, none is replaced
    unless `--overwrite` allows it, and no two are the same path."""
    keep, flag = [args.model], "--overwrite"
    outputs = [path for path in (args.tflite, args.saved_model, tokenizer and tokenizer.path,
                                 args.json) if path]
    files.check_distinct(outputs)
    if args.tflite:
        files.check_file_target(args.tflite, args.overwrite, files.is_tflite_file,
                                "a .tflite file", keep, flag)
    if args.saved_model:
        files.check_folder_target(args.saved_model, args.overwrite, keep, flag)
    if tokenizer:
        tokenizer.check(args.overwrite, files.tflite_metadata_of(args.tflite), keep, flag)
    if args.json:
        files.check_file_target(args.json, args.overwrite, files.is_json_report,
                                "a JSON export report", keep, flag)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)
    if args.quantization in RECIPE_NAMES:
        try:  # before any conversion: the optional extra may be missing
            ai_edge_quantizer.require()
        except ImportError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    if not tensorflow_process.is_tensorflow_backend():
        return tensorflow_process.run_cli(argv)
    try:
        model = load_model(args.model)
        # The tokenizer the runners read beside the model (vocab.txt or a
        # SentencePiece .spm), which export_tflite writes with the file.
        check_outputs(args, TokenizerFile.of(model, args.tflite) if args.tflite else None)
        if args.tflite:
            quantization = None if args.quantization == "none" else args.quantization
            representative = calibration_data(model) if quantization == "int8" else None
            report = export_tflite(model, args.tflite, quantization=quantization,
                                   representative_dataset=representative,
                                   embedding_mode=args.embedding_mode,
                                   verify=not args.no_verify, overwrite=args.overwrite,
                                   latency_runs=args.latency_runs)
            print(report)
        if args.saved_model:
            path = export_saved_model(model, args.saved_model, embedding_mode=args.embedding_mode,
                                      overwrite=args.overwrite)
            print(f"wrote SavedModel {path}")
        if args.json:
            files.write_file(args.json, report.to_json(indent=2).encode("utf-8"), args.overwrite,
                             files.is_json_report)
    except (ValueError, TypeError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
