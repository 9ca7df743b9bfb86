"""Entry point of the `modelstore` Pulumi project: builds the stores named in the stack's
`modelstore:stores` config (see pulumi_modelstore/program.py)."""

from pulumi_modelstore.program import main

main()
