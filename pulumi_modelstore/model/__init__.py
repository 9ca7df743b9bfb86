"""Getting a model into a store and proving it arrived: the programs the seed and verification
Jobs run.

- :mod:`.sources`: one parser for a model source URI (``hf://``, ``s3://``, ``gs://``,
  ``az://``, ``file://``) and the sources that list a revision's files (with the sha256 the
  source publishes, where it publishes one) and stream them.
- :mod:`.layout`: where revisions, partial downloads and manifests live in a store, and the
  manifest itself (path, size and sha256 per file, and the manifest's own digest).
- :mod:`.seed`: ``python -m pulumi_modelstore.model.seed``: download, check, publish in one
  step, collect old revisions.
- :mod:`.verify`: ``python -m pulumi_modelstore.model.verify``: check a published revision as
  readers see it and measure its read speed.

This is the core layer: it imports no cloud room, no plan engine and no CLI, and only the
standard library at import time (boto3 is imported by the ``s3://`` source when it runs), so a
Job's image needs nothing beyond the package and Python.
"""
