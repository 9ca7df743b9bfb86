# Sourced by the scripts with the extra they need: `. scripts/_venv.sh all` (the library with
# every cloud's SDK: scripts/plan, scripts/docs) or `. scripts/_venv.sh test` (that and the
# test tools: scripts/test, scripts/golden). Makes or reuses the venv ($VENV, default .venv;
# the scripts run its tools as "$venv/bin/...") and installs the project into it, editable,
# with that extra whenever pyproject.toml has changed since that extra was last installed.
# Each extra has a stamp of its own, and an install stamps every extra it includes (test
# includes all), so running scripts/test and then scripts/plan installs nothing the second time.
extra=${1:?usage: . scripts/_venv.sh <extra of pyproject.toml>}
venv=${VENV:-.venv}
python=${PYTHON:-python3}
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
    echo "error: $python is older than Python 3.11 (set PYTHON to a newer one)" >&2
    exit 1
}
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
want=$("$python" -c 'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())' <pyproject.toml)
if [ "$(cat "$venv/.modelstore-installed-$extra" 2>/dev/null)" != "$want" ]; then
    echo "installing pulumi-modelstore[$extra] into $venv ..." >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[$extra]"
    # The extras this one includes, through pyproject.toml's pulumi-modelstore[...] entries.
    included=$("$python" - "$extra" <<'EOF'
import re, sys, tomllib

with open("pyproject.toml", "rb") as f:
    extras = tomllib.load(f)["project"]["optional-dependencies"]
todo, found = [sys.argv[1]], set()
while todo:
    name = todo.pop()
    if name not in found:
        found.add(name)
        for req in extras.get(name, []):
            if m := re.fullmatch(r"pulumi-modelstore\[([\w,\s-]+)\]", req.strip()):
                todo += [e.strip() for e in m.group(1).split(",")]
print(" ".join(sorted(found)))
EOF
    )
    for name in $included; do
        echo "$want" >"$venv/.modelstore-installed-$name"
    done
fi
