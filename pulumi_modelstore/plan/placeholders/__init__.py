"""Deterministic stand-ins for what the clouds would answer, kept per cloud.

Invokes (data sources) get answers shaped like the real ones so a stack that names only its
cluster still plans; a data source with no answer here fails the plan, naming it. With
``--fill-outputs`` every created resource gets outputs shaped like the real ones (ids, ARNs, DNS
names). Every value is derived from a hash of the resource's URN or the invoke's arguments,
never from a counter, so two plans of one stack are byte-identical.

``registry.py`` holds the registries and what is Kubernetes' (the core); each cloud's answers
live in a module of their own (``aws.py``), which registers them in ``registry`` on import.
"""

from . import aws, azure, gcp  # noqa: F401  (each registers its answers on import)
from .registry import (
    ID_FROM_INPUT,
    ID_MAKERS,
    ID_PREFIXES,
    INVOKES,
    OUTPUTS,
    Created,
    InvokeHandler,
    OutputsFn,
    digest,
    invented,
    outputs_of,
    resource_id,
    resource_outputs,
    strings,
)

__all__ = [
    "ID_FROM_INPUT",
    "ID_MAKERS",
    "ID_PREFIXES",
    "INVOKES",
    "OUTPUTS",
    "Created",
    "InvokeHandler",
    "OutputsFn",
    "digest",
    "invented",
    "outputs_of",
    "resource_id",
    "resource_outputs",
    "strings",
]
