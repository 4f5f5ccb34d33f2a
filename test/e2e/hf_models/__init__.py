"""The model generator behind make_hf_models.py (the entry point, whose docstring describes the
models): exporter-form graph writing, one module per architecture family, numpy references."""
