"""`MediaPipeStagedModel`: a `StagedModel` (every step of the pipeline takes it) that also
carries MediaPipe's fixed length, tokenizer file and running task."""

import dataclasses

from keras_subembed.export.mediapipe.mediapipe_staged_model import MediaPipeStagedModel
from keras_subembed.export.staged_model import StagedModel


def test_the_task_is_added_to_a_copy_that_keeps_the_rest():
    staged = MediaPipeStagedModel("embedder", "inputs", samples=["a text"], sequence_length=16,
                                  mediapipe_tokenizer=("BertTokenizer", "vocab.txt", b"[PAD]\n"))
    assert isinstance(staged, StagedModel) and staged.converted is None
    # What `MediaPipeFormat.measure` does while the file runs.
    measuring = dataclasses.replace(staged, embedder="task")
    assert (measuring.embedder, staged.embedder) == ("task", None)
    assert measuring.sequence_length == 16 and measuring.samples == ["a text"]
    assert measuring.mediapipe_tokenizer == ("BertTokenizer", "vocab.txt", b"[PAD]\n")
    assert [field.name for field in dataclasses.fields(staged)][:5] == [
        field.name for field in dataclasses.fields(StagedModel)]
