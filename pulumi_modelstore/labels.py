"""The Kubernetes label keys the library puts on what it makes, each in one place: the stores,
the model Jobs and the plan comparison read them here (the comparison runs in the CLI, which
keeps the Kubernetes SDK out of its start-up, so the keys live in a module that imports
nothing)."""

STORE_LABEL = "modelstore.pulumi.com/store"  # the store's name, on everything it makes
ROLE_LABEL = "modelstore.pulumi.com/role"  # a model pod's part: seed, verify, loader, ...
REVISION_LABEL = "modelstore.pulumi.com/revision"  # the model revision a Job seeds or checks
