"""Getting a model into a store and proving it arrived: the programs the seed and verification
Jobs run.

- :mod:`.sources`: one parser for a model source URI (``hf://``, ``s3://``, ``gs://``,
  ``az://``, ``file://``) and the sources that list a revision's files (with the digest the
  source publishes, where it publishes one) and stream them; :mod:`.aws` (S3 with SigV4 and
  the credentials of an EKS pod), :mod:`.gcs` and :mod:`.azure` are their clients, over
  :mod:`.net` (HTTP with one-line errors).
- :mod:`.bundle`: the programs as the files a Job mounts from a ConfigMap, and the command
  that runs them.
- :mod:`.layout`: where revisions, partial downloads and manifests live in a store, and the
  manifest itself (path, size and sha256 per file, and the manifest's own digest).
- :mod:`.seed`: ``python -m pulumi_modelstore.model.seed``: download, check, publish in one
  step, collect old revisions.
- :mod:`.verify`: ``python -m pulumi_modelstore.model.verify``: check a published revision as
  readers see it and measure its read speed.

This is the core layer: it imports no cloud room, no plan engine and no CLI, and nothing but
the standard library (no boto3, no cloud SDK: every source speaks HTTP through ``urllib``), so
a Job's image is a bare Python and the bundle.
"""
