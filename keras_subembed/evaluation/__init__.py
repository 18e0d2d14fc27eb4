"""Measuring sentence encoders: cosine to a reference in and out of domain, retrieval
(also across languages) and topics, word similarity, sentiment with its interval; the results table, the
quality-vs-size plot and the size frontier."""

from keras_subembed.evaluation.metrics import bootstrap_interval
from keras_subembed.evaluation.metrics import stratified_bootstrap_interval
from keras_subembed.evaluation.metrics import mean_cosine
from keras_subembed.evaluation.metrics import pareto_front
from keras_subembed.evaluation.metrics import plot_quality_vs_size
from keras_subembed.evaluation.metrics import sentiment_accuracy
from keras_subembed.evaluation.metrics import sentiment_correct
from keras_subembed.evaluation.metrics import stratified_split
from keras_subembed.evaluation.metrics import table_word_similarity_spearman
from keras_subembed.evaluation.metrics import topic_accuracy
from keras_subembed.evaluation.metrics import word_similarity_spearman
from keras_subembed.evaluation.results_table import format_table
from keras_subembed.evaluation.retrieval import cross_lingual_retrieval
from keras_subembed.evaluation.retrieval import translation_margins
from keras_subembed.evaluation.retrieval import translation_retrieval
from keras_subembed.evaluation.language_evaluation import LanguageEvaluation
from keras_subembed.evaluation.language_report import write_language_report
from keras_subembed.evaluation.runners import keras_runner
from keras_subembed.evaluation.runners import onnx_runner
from keras_subembed.evaluation.runners import tflite_runner
from keras_subembed.evaluation.sentence_evaluation import SentenceEvaluation
from keras_subembed.evaluation.size_frontier import SizeFrontier
from keras_subembed.evaluation.tokenized_texts import TokenizedTexts

__all__ = [
    "LanguageEvaluation",
    "onnx_runner",
    "write_language_report",
    "SentenceEvaluation",
    "SizeFrontier",
    "TokenizedTexts",
    "bootstrap_interval",
    "stratified_bootstrap_interval",
    "cross_lingual_retrieval",
    "format_table",
    "keras_runner",
    "mean_cosine",
    "pareto_front",
    "plot_quality_vs_size",
    "sentiment_accuracy",
    "sentiment_correct",
    "stratified_split",
    "table_word_similarity_spearman",
    "tflite_runner",
    "topic_accuracy",
    "translation_margins",
    "translation_retrieval",
    "word_similarity_spearman",
]
