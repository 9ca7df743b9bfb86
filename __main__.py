"""The plugin entry point of the multi-language component package (``PulumiPlugin.yaml``).

Pulumi's Python language host runs ``python <this directory> <engine address> [flags]``;
this serves every public component as package ``modelstore`` (``pulumi_modelstore.provider``).
Importing this file does nothing.
"""

import sys

if __name__ == "__main__":
    from pulumi_modelstore.provider import serve

    serve(sys.argv[1:])
