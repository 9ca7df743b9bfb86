"""How fast the seed downloads a model, against huggingface_hub.snapshot_download on the same
loopback server, in one run: ``python scripts/bench_seed.py [--quick]``.

A stand-in for the Hugging Face Hub (the tree endpoint the seed and snapshot_download list
with, paginated by ``Link``; the ``resolve`` endpoint with ``HEAD``, ranges and the headers
huggingface_hub reads: ``X-Repo-Commit``, ``ETag``, ``Content-Length``) runs in a process of
its own on 127.0.0.1: a ``ThreadingHTTPServer`` speaking kept-alive HTTP/1.1 that sends
bodies with ``sendfile`` from the page cache, so neither client is held back by the server.
It serves two repositories made here: 4 large files (``--large-mib`` each, LFS: checked by
sha256) and ``--small-files`` small ones (``--small-kib`` each, Git blobs: checked by blob id).

Each client downloads each repository ``--runs`` times into an empty folder; the table gives
the median wall time, the CPU seconds per GB the client's process used (user + system, its
children's accounting), the CPU seconds the stand-in Hub's process used serving it (on the
same cores: many ranged requests cost it more than one request per file), and the ratios.
Clients: this checkout's seed (``python -I -S -m pulumi_modelstore.model.seed``, the image's
Python with the standard library only), the seed of ``--baseline REF`` (a git ref, e.g. the
commit before the parallel transfer) when given, and ``snapshot_download(..., local_dir=...,
max_workers=8)`` run by ``--hf-python`` (a Python with the ``bench`` extra: ``pip install -e
'.[bench]'``), with Xet and progress bars off.
``--quick``: 4 x 64 MiB and 200 small files, one run each.

A fourth row, ``floor``, is what this machine allows: the least work a checked download does
(:data:`FLOOR_PROGRAM`: the listing, then one GET per file over kept-alive connections, as many
at once as the seed's threads, each file hashed and written as it arrives; no ranges, no retry,
no manifest, no publish). Its ratio is the ceiling of any client's on the machine the bench ran
on; the seed's distance from it is the program's own cost. On a 2-core machine the stand-in
Hub, the kernel's loopback and the client share the cores, so no row there is "bound by the
source or the NIC".

In a VM that hands freed memory back to its host (free page reporting: the Linux
``page_reporting`` module), a page written into a new file costs a fault on the host as well,
and which client meets fresh pages is chance: the bench says so when it sees the module, and
its numbers are only comparable within one run.
"""

from __future__ import annotations

import argparse
import hashlib
import http.server
import json
import multiprocessing
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHA = "0e9e39f249a16976918f6564b8830bc894c89659"
PAGE = 1000  # tree entries per page, as the Hub pages its tree listing


def make_repos(base: Path, large_mib: int, small_files: int, small_kib: int) -> dict[str, Path]:
    """The two repositories' files under ``base``: ``large`` and ``small``."""
    block = os.urandom(16 << 20)
    large = base / "large"
    large.mkdir(parents=True)
    for n in range(4):
        with (large / f"model-{n + 1:05d}-of-00004.safetensors").open("wb") as out:
            left = large_mib << 20
            while left:
                chunk = block[: min(left, len(block))]
                out.write(n.to_bytes(4, "big") + chunk[4:])
                left -= len(chunk)
    small = base / "small"
    for n in range(small_files):
        path = small / f"shard-{n // 100:03d}" / f"file-{n:05d}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(n.to_bytes(4, "big") + os.urandom((small_kib << 10) - 4))
    return {"large": large, "small": small}


def tree(repo: Path) -> list[dict[str, object]]:
    """The Hub's tree entries for the files under ``repo`` (LFS for .safetensors)."""
    entries: list[dict[str, object]] = []
    for path in sorted(p for p in repo.rglob("*") if p.is_file()):
        data_size = path.stat().st_size
        rel = path.relative_to(repo).as_posix()
        blob = hashlib.sha1(f"blob {data_size}\0".encode())
        sha256 = hashlib.sha256()
        with path.open("rb") as stream:
            while chunk := stream.read(16 << 20):
                blob.update(chunk)
                sha256.update(chunk)
        entry: dict[str, object] = {
            "type": "file",
            "path": rel,
            "size": data_size,
            "oid": blob.hexdigest(),
        }
        if rel.endswith(".safetensors"):
            entry["lfs"] = {"oid": sha256.hexdigest(), "size": data_size, "pointerSize": 134}
        entries.append(entry)
    return entries


def serve(repos: dict[str, str], trees: dict[str, list[dict[str, object]]], port: list) -> None:
    """The Hub stand-in (module docstring), forever; its port goes into ``port``."""

    class Hub(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go in two writes: without TCP_NODELAY the body waits for the
        # client's delayed ACK of the headers (40 ms) on every kept-alive request.
        disable_nagle_algorithm = True

        def log_message(self, *args: object) -> None:
            pass

        def do_HEAD(self) -> None:
            self.answer(body=False)

        def do_GET(self) -> None:
            self.answer(body=True)

        def answer(self, body: bool) -> None:
            path, _, query = self.path.partition("?")
            parts = path.strip("/").split("/")
            if parts[:2] == ["api", "models"] and len(parts) >= 6 and parts[4] == "tree":
                return self.listing(parts[3], query)
            if len(parts) >= 5 and parts[2] == "resolve" and parts[1] in repos:
                return self.file(parts[1], "/".join(parts[4:]), body)
            return self.reply(404, b"{}")

        def listing(self, repo: str, query: str) -> None:
            entries = trees.get(repo)
            if entries is None:
                return self.reply(404, b"{}")
            cursor = int(query.partition("cursor=")[2] or 0)
            page = entries[cursor : cursor + PAGE]
            headers = {}
            if cursor + PAGE < len(entries):
                url = f"{self.path.partition('&cursor=')[0]}&cursor={cursor + PAGE}"
                headers["Link"] = f'<http://{self.headers["Host"]}{url}>; rel="next"'
            return self.reply(200, json.dumps(page).encode(), headers)

        def file(self, repo: str, rel: str, body: bool) -> None:
            entry = next((e for e in trees[repo] if e["path"] == rel), None)
            if entry is None:
                return self.reply(404, b"{}")
            full = Path(repos[repo]) / rel
            size = int(entry["size"])  # type: ignore[call-overload]
            lfs = entry.get("lfs")
            etag = lfs["oid"] if isinstance(lfs, dict) else entry["oid"]
            start, end, status = 0, size - 1, 200
            wanted = self.headers.get("Range")
            if wanted:
                first, _, last = wanted.removeprefix("bytes=").partition("-")
                start, end, status = int(first), int(last) if last else size - 1, 206
            self.send_response(status)
            self.send_header("Content-Length", str(end - start + 1))
            self.send_header("ETag", f'"{etag}"')
            self.send_header("X-Repo-Commit", SHA)
            self.send_header("Accept-Ranges", "bytes")
            if status == 206:
                self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
            self.end_headers()
            if body and end >= start:
                with full.open("rb") as stream:
                    self.connection.sendfile(stream, start, end - start + 1)

        def reply(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 128

    server = Server(("127.0.0.1", 0), Hub)
    port.append(server.server_address[1])
    server.serve_forever()


def server_process(repos: dict[str, Path]) -> tuple[multiprocessing.Process, int]:
    trees = {name: tree(path) for name, path in repos.items()}
    manager = multiprocessing.Manager()
    port = manager.list()
    process = multiprocessing.Process(
        target=serve, args=({k: str(v) for k, v in repos.items()}, trees, port), daemon=True
    )
    process.start()
    while not port:
        time.sleep(0.05)
    number = int(port[0])
    manager.shutdown()
    return process, number


def seed_command(root: Path, endpoint: str, repo: str, dest: Path) -> list[str]:
    launcher = (
        f"import runpy,sys;sys.path.insert(0,{str(root)!r});"
        "runpy.run_module('pulumi_modelstore.model.seed',run_name='__main__',alter_sys=True)"
    )
    return [
        sys.executable,
        "-I",
        "-S",
        "-c",
        launcher,
        "--source",
        f"hf://org/{repo}",
        "--revision",
        SHA,
        "--dest",
        str(dest),
        "--hf-endpoint",
        endpoint,
        "--termination-log",
        "",
    ]


HF_PROGRAM = """
import sys
from huggingface_hub import snapshot_download
snapshot_download(sys.argv[1], revision=sys.argv[2], local_dir=sys.argv[3], max_workers=8)
"""


# The floor (module docstring): stdlib only, as the seed. argv: endpoint, repo, revision, dest,
# threads.
FLOOR_PROGRAM = """
import hashlib, http.client, json, os, sys, threading, urllib.parse
endpoint, repo, revision, dest, threads = sys.argv[1:6]
host = urllib.parse.urlsplit(endpoint)
files, url = [], f"/api/models/{repo}/tree/{revision}?recursive=true"
conn = http.client.HTTPConnection(host.hostname, host.port)
while url:
    conn.request("GET", url)
    answer = conn.getresponse()
    files += [e for e in json.loads(answer.read()) if e["type"] == "file"]
    link = answer.getheader("Link") or ""
    url = urllib.parse.urlsplit(link[1:link.index(">")]) if "next" in link else None
    url = url and f"{url.path}?{url.query}"
conn.close()
lock, failures = threading.Lock(), []
def work():
    conn = http.client.HTTPConnection(host.hostname, host.port)
    view = memoryview(bytearray(1 << 20))
    while True:
        with lock:
            if not files:
                return
            entry = files.pop()
        sha256 = hashlib.sha256()
        blob = None if "lfs" in entry else hashlib.sha1(f"blob {entry['size']}\\0".encode())
        path = os.path.join(dest, entry["path"])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        conn.request("GET", f"/{repo}/resolve/{revision}/{entry['path']}")
        answer = conn.getresponse()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        while n := answer.readinto(view):
            chunk = view[:n]
            sha256.update(chunk)
            if blob:
                blob.update(chunk)
            os.write(fd, chunk)
        os.close(fd)
        want = entry["lfs"]["oid"] if blob is None else entry["oid"]
        if (sha256 if blob is None else blob).hexdigest() != want:
            failures.append(entry["path"])
workers = [threading.Thread(target=work) for _ in range(int(threads))]
for worker in workers:
    worker.start()
for worker in workers:
    worker.join()
sys.exit(f"digest mismatch: {failures}" if failures else 0)
"""


def floor_command(endpoint: str, repo: str, dest: Path, threads: int) -> list[str]:
    return [
        sys.executable,
        "-I",
        "-S",
        "-c",
        FLOOR_PROGRAM,
        endpoint,
        f"org/{repo}",
        SHA,
        str(dest),
        str(threads),
    ]


def page_reporting() -> str | None:
    """The free page reporting order when this kernel hands freed memory to its host."""
    order = Path("/sys/module/page_reporting/parameters/page_reporting_order")
    try:
        value = int(order.read_text())
    except (OSError, ValueError):
        return None
    return str(value) if value <= 10 else None  # MAX_PAGE_ORDER is 10: above, nothing is


def hf_command(python: str, repo: str, dest: Path) -> list[str]:
    return [python, "-c", HF_PROGRAM, f"org/{repo}", SHA, str(dest)]


def hub_cpu(pid: int) -> float:
    """CPU seconds (user + system) the stand-in Hub's process has used; 0 where /proc is not."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one run of ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{command[0]} failed: {done.stderr.strip()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def baseline_tree(ref: str, into: Path) -> Path:
    """The ``model`` package of git ref ``ref``, laid out as the bundle lays it out."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "pulumi_modelstore/model"],
        capture_output=True,
        check=True,
    ).stdout
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    (into / "pulumi_modelstore" / "__init__.py").write_text("")
    return into


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="4 x 64 MiB, 200 small, 1 run")
    parser.add_argument("--large-mib", type=int, default=1024)
    parser.add_argument("--small-files", type=int, default=2000)
    parser.add_argument("--small-kib", type=int, default=16)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", help="a git ref whose seed is measured too")
    parser.add_argument("--hf-python", default=sys.executable, help="has huggingface_hub")
    parser.add_argument("--dir", help="where the data goes (default: /dev/shm, else /tmp)")
    parser.add_argument("--only", choices=("large", "small"), help="one repository only")
    args = parser.parse_args()
    if args.quick:
        args.large_mib, args.small_files, args.runs = 64, 200, 1
    shm = Path("/dev/shm")
    where = args.dir or (shm if shm.is_dir() else None)
    base = Path(tempfile.mkdtemp(prefix="bench-seed-", dir=where))
    try:
        repos = make_repos(base / "repos", args.large_mib, args.small_files, args.small_kib)
        if args.only:
            repos = {args.only: repos[args.only]}
        process, port = server_process(repos)
        endpoint = f"http://127.0.0.1:{port}"
        bundle = base / "bundle"
        (bundle / "pulumi_modelstore").mkdir(parents=True)
        model = bundle / "pulumi_modelstore" / "model"
        shutil.copytree(ROOT / "pulumi_modelstore" / "model", model)
        (bundle / "pulumi_modelstore" / "__init__.py").write_text("")
        clients = {"seed": bundle}
        if args.baseline:
            clients["baseline"] = baseline_tree(args.baseline, base / "baseline")
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(base),
            "HF_HOME": str(base / "hf-home"),
            "HF_HUB_DISABLE_XET": "1",
            "HF_HUB_DISABLE_PROGRESS_BARS": "1",
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_ENDPOINT": endpoint,
        }
        results: dict[tuple[str, str], tuple[float, float, float]] = {}
        reporting = page_reporting()
        if reporting is not None:
            print(
                f"note: this kernel reports freed memory to its host (page_reporting_order "
                f"{reporting}): a write into a fresh page costs a host fault, and runs swing; "
                "compare rows of one run only"
            )
        # The seed's thread count, from the bundle (whose package __init__ imports nothing).
        sys.path.insert(0, str(bundle))
        from pulumi_modelstore.model.transfer import WORKERS

        for repo, path in repos.items():
            size = sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
            names = [*clients, "floor", "snapshot_download"]
            samples: dict[str, list[tuple[float, float, float]]] = {n: [] for n in names}
            for _ in range(args.runs):
                for name in names:  # in turn, so a drift of the machine hits each alike
                    dest = base / "dest"
                    shutil.rmtree(dest, ignore_errors=True)
                    shutil.rmtree(base / "hf-home", ignore_errors=True)
                    dest.mkdir()
                    if name == "snapshot_download":
                        command = hf_command(args.hf_python, repo, dest)
                    elif name == "floor":
                        command = floor_command(endpoint, repo, dest, WORKERS)
                    else:
                        command = seed_command(clients[name], endpoint, repo, dest)
                    hub = hub_cpu(process.pid or 0)
                    wall, cpu = timed(command, env)
                    samples[name].append((wall, cpu, hub_cpu(process.pid or 0) - hub))
            for name, runs in samples.items():
                wall = statistics.median(w for w, _, _ in runs)
                cpu = statistics.median(c for _, c, _ in runs)
                hub = statistics.median(h for _, _, h in runs)
                results[(repo, name)] = (wall, cpu / (size / 1e9), hub)
            hf_wall = results[(repo, "snapshot_download")][0]
            count = sum(1 for p in path.rglob("*") if p.is_file())
            print(f"{repo}: {count} files, {size / 2**30:.2f} GiB, median of {args.runs}")
            for name in names:
                wall, cpu_gb, hub = results[(repo, name)]
                print(
                    f"  {name:18s} {wall:7.2f} s  {size / wall / 1e6:8.0f} MB/s  "
                    f"{cpu_gb:5.2f} CPU-s/GB  Hub {hub:5.2f} CPU-s  "
                    f"snapshot_download/this {hf_wall / wall:5.2f}x"
                )
        process.kill()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
