"""The Kubernetes versions the library supports, one place for the docs and the tests."""

KUBERNETES_MINORS = ("1.31", "1.35")
"""The oldest and the newest Kubernetes minor the project supports: every object every stack
and example plans is validated against both minors' OpenAPI v3 documents
(``tests/validators/kube_schema.py``)."""
