# Sourced by scripts/plan and scripts/test: make or reuse .venv and install the project into it
# (with its test extras) whenever pyproject.toml has changed since the last install.
python=${PYTHON:-python3}
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
    echo "error: $python is older than Python 3.11 (set PYTHON to a newer one)" >&2
    exit 1
}
[ -x .venv/bin/python ] || "$python" -m venv .venv
stamp=.venv/.modelstore-installed
want=$(cat pyproject.toml | "$python" -c 'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())')
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "installing pulumi-modelstore and its test tools into .venv ..." >&2
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
    echo "$want" > "$stamp"
fi
