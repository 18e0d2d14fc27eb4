"""The compressed model classes: keras-hub's BERT, RoBERTa and XLM-RoBERTa backbones,
text embedders and masked LM with a compressed token table, `CompressedBackbone` for any
other encoder, and what they are built from (the encoder's graph and weights, pretrained
token tables)."""
