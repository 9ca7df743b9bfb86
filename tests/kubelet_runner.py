"""One container of a pod, started the way a kubelet and its runtime start it, for
``tests/kubelet.py``: run as root inside a private mount namespace (``unshare -m``), with the
container's description as a JSON file (its one argument).

It mounts a tmpfs as the container's root filesystem, binds the node's system folders into it
read-only (the image's stand-in: its Python is the test's), binds each volume mount at its
``mountPath`` (a read-only one remounted read-only, as the runtime does), lays the
ServiceAccount token on a tmpfs of its own (``strictatime``: whether the program read the
token shows afterwards), remounts the root read-only where ``readOnlyRootFilesystem`` says so,
and runs the command in it (``chroot``) as the pod's ``runAsUser``/``runAsGroup`` with its
supplementary groups (``fsGroup``). It writes what happened (exit status, output, whether the
token was read) as JSON to the result path. The mounts go with the namespace when it ends.

Standard library only: it runs under ``python -I``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# What an image gives a program besides its own files: the system's folders (the test's Python
# and its libraries live there) and a few device nodes (the runtime's /dev).
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
DEVICES = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom")


def mount(*args: str) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"mount {' '.join(args)}: {done.stderr.strip()}")


def inside(root: Path, path: str) -> Path:
    return root / path.lstrip("/")


def make_point(where: Path, is_file: bool) -> None:
    """A mount point: a folder, or an empty file for a file bind."""
    if is_file:
        where.parent.mkdir(parents=True, exist_ok=True)
        where.touch(exist_ok=True)
    else:
        where.mkdir(parents=True, exist_ok=True)


def bind(source: str, target: Path, read_only: bool, later: list[Path]) -> None:
    make_point(target, not os.path.isdir(source))
    mount("--rbind", source, str(target))
    if read_only:
        later.append(target)


def system(root: Path, extra: list[str], later: list[Path]) -> None:
    for path in (*SYSTEM, *extra):
        if os.path.islink(path):
            (root / path.lstrip("/")).symlink_to(os.readlink(path))
        elif os.path.isdir(path):
            bind(path, inside(root, path), True, later)
    for device in DEVICES:
        if os.path.exists(device):
            bind(device, inside(root, device), False, later)


def token(root: Path, spec: dict[str, Any] | None) -> Path | None:
    """The ServiceAccount token volume (a projected volume: ``token``, ``ca.crt``,
    ``namespace``) on a tmpfs mounted ``strictatime``, every file's access time set to 0."""
    if spec is None:
        return None
    where = inside(root, spec["target"])
    where.mkdir(parents=True, exist_ok=True)
    mount("-t", "tmpfs", "-o", "strictatime,mode=0755", "tmpfs", str(where))
    for name, (text, mode) in spec["files"].items():
        path = where / name
        path.write_text(text)
        path.chmod(mode)
        os.utime(path, (0, time.time()))
    # Left writable: a read-only mount keeps no access time. The files are root's 0644, so
    # the program can no more change them than through the kubelet's read-only mount.
    return where / "token"


def main() -> int:
    spec = json.loads(Path(sys.argv[1]).read_text())
    root = Path(spec["root"])
    mount("-t", "tmpfs", "-o", "mode=0755", "tmpfs", str(root))
    read_only: list[Path] = []
    system(root, spec["system"], read_only)
    for item in sorted(spec["binds"], key=lambda b: b["target"]):
        bind(item["source"], inside(root, item["target"]), item["read_only"], read_only)
    token_file = token(root, spec["token"])
    for target in read_only:
        mount("-o", "remount,bind,ro", str(target))
    if spec["read_only_root"]:
        mount("-o", "remount,ro", str(root))

    def enter() -> None:
        os.chroot(root)
        os.chdir(spec["workdir"])

    started = subprocess.Popen(
        spec["argv"],
        env=spec["env"],
        preexec_fn=enter,  # the runner has one thread: preexec_fn is safe
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = started.communicate(timeout=spec["timeout"])
    except subprocess.TimeoutExpired:
        started.kill()
        out, err = started.communicate()
    result = {
        "returncode": started.returncode,
        "stdout": out,
        "stderr": err,
        "token_read": token_file is not None and token_file.stat().st_atime != 0,
    }
    Path(spec["result"]).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
