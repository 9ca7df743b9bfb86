"""Run a Pulumi Python program offline, as a preview, and record every registration.

The program runs on the Pulumi SDK's mock runtime: a :class:`RecordingMonitor` (a
``MockMonitor`` subclass) receives each ``RegisterResourceRequest`` and keeps what the engine
would see (type, name, parent, dependencies, property dependencies, provider, protect,
retainOnDelete, deleteBeforeReplace, ignoreChanges, replaceOnChanges, replaceWith, aliases,
inputs). Outputs of created resources stay unknown, as in ``pulumi preview``, unless
``fill_outputs`` asks for placeholders.

A ``pulumi.StackReference`` is answered from a saved output file, not from a backend: the
outputs of stack ``<org>/<project>/<stack>`` are read from
``<stack outputs dir>/<org>.<project>.<stack>.json``, a JSON object of output names to values,
as ``pulumi stack output --stack <org>/<project>/<stack> --json --show-secrets`` prints it. The
directory is ``stack-outputs`` under the project's stack config directory for
:func:`plan_directory` (``stacks/stack-outputs/`` on this repository), and ``stack_outputs_dir``
(default ``./stack-outputs``) for :func:`plan_program`. A missing or malformed file fails the
plan with one line naming the reference and the file.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import gc
import json
import logging
import os
import runpy
import sys
from collections.abc import Callable, Coroutine, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypedDict, TypeVar, Unpack, cast

from google.protobuf import json_format
from pulumi.runtime import config as pulumi_config
from pulumi.runtime import mocks, rpc, settings
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime.proto import provider_pb2, resource_pb2, source_pb2
from pulumi.runtime.stack import run_in_stack

from ..errors import ModelStoreInputError
from . import placeholders
from .project import Project, load_project

UNKNOWN = rpc.UNKNOWN
_T = TypeVar("_T")
SECRET = "[secret]"


def _no_options() -> dict[str, Any]:
    """The resource options of a step the engine records itself (a read, the stack), as a
    step without options records them (fresh lists for each record)."""
    return {
        "protect": False,
        "retainOnDelete": False,
        "deleteBeforeReplace": False,
        "ignoreChanges": [],
        "replaceOnChanges": [],
    }


_SIG = rpc._special_sig_key
_SECRET_SIG = rpc._special_secret_sig
_RESOURCE_SIG = rpc._special_resource_sig
_ASSET_SIGS = {rpc._special_asset_sig: "[asset]", rpc._special_archive_sig: "[archive]"}
STACK_TYPE = "pulumi:pulumi:Stack"
STACK_REFERENCE_TYPE = "pulumi:pulumi:StackReference"


class StackOutputsError(Exception):
    """A stack reference the plan cannot answer: its saved output file is missing or bad."""


def saved_stack_outputs(directory: Path, reference: str) -> dict[str, Any]:
    """The saved outputs of stack ``reference`` (``<org>/<project>/<stack>``) in
    ``directory`` (see the module docstring)."""
    path = directory / f"{reference.replace('/', '.')}.json"
    save = f"pulumi stack output --stack {reference} --json --show-secrets > {path}"
    if not path.is_file():
        raise StackOutputsError(
            f"stack reference {reference}: no saved outputs at {path} (save them with `{save}`)"
        )
    try:
        outputs = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise StackOutputsError(
            f"stack reference {reference}: {path} is not JSON ({' '.join(str(exc).split())})"
        ) from exc
    if not isinstance(outputs, dict):
        raise StackOutputsError(
            f"stack reference {reference}: {path} must be a JSON object of output names to "
            f"values, as `{save}` writes it"
        )
    return outputs


class PlanError(Exception):
    """The program failed: a validation error, bad config, an exception in the program."""

    def __init__(self, message: str, cause: BaseException, registered: list[str]) -> None:
        super().__init__(message)
        self.cause = cause
        self.registered = registered
        """URNs registered before the failure: the stack alone when input was rejected up front."""


@dataclass
class Plan:
    project: str
    stack: str
    steps: list[dict[str, Any]]
    outputs: dict[str, Any]
    invokes: list[dict[str, Any]]
    diagnostics: list[dict[str, str]]
    fill_outputs: bool
    config: dict[str, str] = field(default_factory=dict)
    secret_keys: list[str] = field(default_factory=list)
    placeholders: dict[str, str] = field(default_factory=dict)
    """Each value the plan made up (:func:`.placeholders.invented`) -> where from: the data
    source whose placeholder answer held it, ``--fill-outputs`` (a created resource's
    placeholder outputs) or the read whose placeholder outputs did. Not part of the JSON
    plan: the tree marks what holds one, so that a reviewer tells invented values from the
    stack's own."""

    def states(self) -> Iterator[dict[str, Any]]:
        for step in self.steps:
            yield step["newState"]

    def by_type(self, type_: str) -> list[dict[str, Any]]:
        return [s for s in self.states() if s["type"] == type_]

    def by_name(self, name: str) -> dict[str, Any]:
        found = [s for s in self.states() if s["urn"].rsplit("::", 1)[-1] == name]
        if len(found) != 1:
            raise KeyError(f"{len(found)} resources named {name!r}")
        return found[0]

    def by_urn(self, urn: str) -> dict[str, Any]:
        for s in self.states():
            if s["urn"] == urn:
                return s
        raise KeyError(urn)

    def kubernetes_objects(self) -> list[dict[str, Any]]:
        """Every Kubernetes object the plan would create (Helm releases are rendered by Helm
        at deploy time, so they are not among them)."""
        return [
            s["inputs"]
            for s in self.states()
            if s["custom"]
            and s["type"].startswith("kubernetes:")
            and "apiVersion" in s["inputs"]
            and "kind" in s["inputs"]
        ]


def to_plain(value: Any) -> Any:
    """A deserialized-for-display property value: secrets masked, resource references as
    their URN, whole-number floats (protobuf Struct numbers) back to ints. Unknowns stay as the
    engine's unknown sentinel, as ``pulumi preview --json`` prints them."""
    if isinstance(value, dict):
        sig = value.get(_SIG)
        if sig == _SECRET_SIG:
            return SECRET
        if sig == _RESOURCE_SIG:
            return value.get("urn", UNKNOWN)
        if sig in _ASSET_SIGS:
            return _ASSET_SIGS[sig]
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _struct(message: Any) -> dict[str, Any]:
    return to_plain(json_format.MessageToDict(message)) if message is not None else {}


class PlanMocks(mocks.Mocks):
    """Answers for the mock runtime: inputs echoed back as in a preview, placeholder ids and
    outputs with ``fill_outputs``, placeholder invoke answers."""

    def __init__(
        self,
        config: Mapping[str, str],
        fill_outputs: bool,
        invoke_overrides: Mapping[str, placeholders.InvokeHandler] | None,
        stack_outputs_dir: Path | None = None,
    ) -> None:
        self.config = dict(config)
        self.stack_outputs_dir = stack_outputs_dir or Path("stack-outputs").resolve()
        self.fill_outputs = fill_outputs
        self.invokes = {**placeholders.INVOKES, **(invoke_overrides or {})}
        self.calls: list[dict[str, Any]] = []
        self.invented: dict[str, str] = {}  # Plan.placeholders
        self._own = set(self.config.values())

    def _invented(self, answer: Any, given: Any, source: str) -> None:
        for value in placeholders.invented(answer, {*self._own, *placeholders.strings(given)}):
            self.invented.setdefault(value, source)

    @staticmethod
    def _key(args: mocks.MockResourceArgs) -> str:
        """What placeholder values are derived from: type and name identify a resource."""
        return f"{args.typ}::{args.name}"

    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str, dict]:
        if not args.custom and args.resource_id is None:
            return "", {}
        inputs = dict(args.inputs)
        if args.typ == STACK_REFERENCE_TYPE:  # answered from the saved output file
            name = str(args.resource_id or inputs.get("name") or args.name)
            outputs = saved_stack_outputs(self.stack_outputs_dir, name)
            return name, {"name": name, "outputs": outputs, "secretOutputNames": []}
        if args.resource_id == UNKNOWN:
            # A read whose id is not known yet: the engine skips it and its outputs stay
            # unknown (pulumi/pulumi pkg/resource/deploy/step.go, ReadStep.Apply).
            return "", {}
        if args.resource_id:  # a read of an existing resource: reads happen in a preview too
            key = f"read::{self._key(args)}::{args.resource_id}"
            out = placeholders.resource_outputs(
                args.typ, key, args.resource_id, inputs, self.config
            )
            self._invented(out, inputs, f"the read of {args.typ}")
            return args.resource_id, {**inputs, **out}
        if not self.fill_outputs:
            return "", inputs
        key = self._key(args)
        id_ = placeholders.resource_id(args.typ, key, inputs)
        out = placeholders.resource_outputs(args.typ, key, id_, inputs, self.config)
        # A Kubernetes object's id is its namespace and name, the stack's own.
        made = out if args.typ.startswith("kubernetes:") else {"id": id_, **out}
        self._invented(made, inputs, "--fill-outputs")
        return id_, {**inputs, **out}

    def call(self, args: mocks.MockCallArgs) -> tuple[dict, list]:
        handler = self.invokes.get(args.token)
        self.calls.append({"token": args.token, "args": to_plain(dict(args.args))})
        if handler is None:
            # An answer of {} would plan on made-up emptiness: fail, naming the data source.
            return {}, [
                (
                    "",
                    f"modelstore plan has no placeholder answer for the data source "
                    f"{args.token}: add one to its cloud's module in "
                    "pulumi_modelstore/plan/placeholders/",
                )
            ]
        try:
            answer = handler(args.args, self.config)
        except Exception as exc:  # a data source that finds nothing fails, as on the real engine
            return {}, [("", " ".join(str(exc).split()))]
        self._invented(answer, args.args, f"the data source {args.token}")
        return answer, []


def _finished(step: Coroutine[Any, Any, _T]) -> _T:
    """The value of a coroutine that has nothing to wait for, run to its end in one step: the
    SDK's serialization of a mock's answer, which is plain values and resource references
    already resolved. (The mock monitor of the SDK runs it on an event loop of the calling
    thread instead, which on the plan loop's own thread would run the plan's other callbacks
    inside this call, one monitor call within another.)"""
    try:
        step.send(None)
    except StopIteration as done:
        return cast(_T, done.value)
    step.close()
    raise RuntimeError("a mock answer waited for another part of the program")


class RecordingMonitor(mocks.MockMonitor):
    """A MockMonitor that keeps every registration the way the engine would receive it. It
    answers registrations, reads and invokes itself, as the SDK's mock monitor does but
    without an event loop of its own (:func:`_finished`), so the plan loop calls it directly
    (:class:`_CallsInPlace`)."""

    def __init__(self, plan_mocks: PlanMocks) -> None:
        super().__init__(plan_mocks)
        self.records: list[dict[str, Any]] = []
        self.stack_outputs: dict[str, Any] = {}

    def _answered(
        self, request: Any, properties: Any, resource_id: str, custom: bool | None = None
    ) -> tuple[str, str, Any]:
        """The URN, id and serialized state the mocks give the resource a registration or a
        read describes (``properties``: its serialized inputs), kept where ``ExistsResource``
        and the ``getResource`` invoke look resources up."""
        urn = self.make_urn(request.parent, request.type, request.name)
        args = mocks.MockResourceArgs(
            typ=request.type,
            name=request.name,
            inputs=rpc.deserialize_properties(properties),
            provider=request.provider,
            resource_id=resource_id,
            custom=custom,
        )
        given_id, state = self.mocks.new_resource(args)
        id_ = given_id or ""  # PlanMocks answers "" for no id; the response takes a string
        self.resources[urn] = mocks.MockMonitor.ResourceRegistration(urn, id_, state)
        return urn, id_, _finished(rpc.serialize_properties(state, {}))

    def _created(self, request: Any) -> resource_pb2.RegisterResourceResponse:
        if request.type == STACK_TYPE:  # the stack has no state
            urn = self.make_urn(request.parent, request.type, request.name)
            return resource_pb2.RegisterResourceResponse(urn=urn)
        custom = request.custom or False
        urn, id_, state = self._answered(request, request.object, request.importId, custom)
        return resource_pb2.RegisterResourceResponse(urn=urn, id=id_, object=state)

    def Invoke(self, request):
        args = rpc.deserialize_properties(request.args)
        if request.tok == "pulumi:pulumi:getResource":  # a resource this plan registered
            found = self.resources.get(args["urn"])
            if found is None:
                raise LookupError(f"unknown resource {args['urn']}")
            answer, failures = found._asdict(), []
        else:
            call = mocks.MockCallArgs(token=request.tok, args=args, provider=request.provider)
            answer, failures = self.mocks.call(call)
        return resource_pb2.ResourceInvokeResponse(
            failures=[provider_pb2.CheckFailure(property=p, reason=r) for p, r in failures],
            **{"return": _finished(rpc.serialize_properties(answer, {}))},
        )

    def RegisterResource(self, request):
        response = self._created(request)
        record = {
            "urn": response.urn,
            "type": request.type,
            "name": request.name,
            "custom": bool(request.custom),
            "parent": request.parent,
            "inputs": _struct(request.object),
            "outputs": _struct(response.object) if request.custom else {},
            "id": response.id,
            "dependencies": list(request.dependencies),
            "propertyDependencies": {
                k: list(v.urns) for k, v in request.propertyDependencies.items()
            },
            "provider": request.provider,
            "version": request.version,
            "protect": bool(request.protect) if request.HasField("protect") else False,
            "retainOnDelete": (
                bool(request.retainOnDelete) if request.HasField("retainOnDelete") else False
            ),
            "deleteBeforeReplace": bool(request.deleteBeforeReplace),
            "ignoreChanges": list(request.ignoreChanges),
            "replaceOnChanges": list(request.replaceOnChanges),
            "replaceWith": list(request.replace_with),
            "aliases": [_alias(a) for a in request.aliases] + list(request.aliasURNs),
            "importId": request.importId,
            "op": "import" if request.importId else "create",
        }
        self.records.append(record)
        return response

    def ReadResource(self, request):
        urn, _, state = self._answered(request, request.properties, request.id)
        response = resource_pb2.ReadResourceResponse(urn=urn, properties=state)
        self.records.append(
            {
                "urn": response.urn,
                "type": request.type,
                "name": request.name,
                "custom": True,
                "parent": request.parent,
                "inputs": {},
                "outputs": _struct(response.properties),
                "id": request.id,
                "dependencies": list(request.dependencies),
                "propertyDependencies": {},
                "provider": request.provider,
                "version": request.version,
                **_no_options(),
                "aliases": [],
                "importId": "",
                "op": "read",
            }
        )
        return response

    def RegisterResourceOutputs(self, request):
        if request.urn.split("::")[2] == STACK_TYPE:
            self.stack_outputs = _struct(request.outputs)
        return super().RegisterResourceOutputs(request)


def _alias(alias: Any) -> Any:
    """An alias as the engine gets it: an old URN, or the spec of the old name/parent/type."""
    if alias.WhichOneof("alias") == "urn":
        return alias.urn
    return json_format.MessageToDict(alias.spec)


class _Diagnostics(logging.Handler):
    """The program's ``pulumi.log`` messages (info and above), kept for the plan and, with
    ``echo``, written there as they come (``warning: <message>``)."""

    def __init__(self, echo: TextIO | None = None) -> None:
        super().__init__(logging.INFO)
        self.items: list[dict[str, str]] = []
        self.echo = echo

    def emit(self, record: logging.LogRecord) -> None:
        item = {"severity": record.levelname.lower(), "message": record.getMessage()}
        self.items.append(item)
        if self.echo is not None:
            self.echo.write(f"{item['severity']}: {item['message']}\n")
            self.echo.flush()


class _CallsInPlace(concurrent.futures.ThreadPoolExecutor):
    """The plan loop's default executor, which runs every monitor call of the SDK
    (``run_in_executor(None, ...)``) at once, on the loop's own thread: the monitor answers
    from memory and never blocks (:class:`RecordingMonitor`), and handing each call to a
    worker thread was a quarter of a small plan's CPU. No thread is ever started."""

    def submit(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> Future[_T]:
        done: Future[_T] = Future()
        try:
            done.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # handed to the awaiting SDK call, as a worker would
            done.set_exception(exc)
        return done


Program = Callable[[], Any]


def plan_program(
    program: Program,
    *,
    project: str = "modelstore",
    stack: str = "test",
    config: Mapping[str, str] | None = None,
    secret_keys: list[str] | None = None,
    fill_outputs: bool = False,
    invoke_overrides: Mapping[str, placeholders.InvokeHandler] | None = None,
    echo: TextIO | None = None,
    stack_outputs_dir: str | Path | None = None,
) -> Plan:
    """Run ``program`` (a callable that declares resources) as a preview and return the plan.

    The program's ``pulumi.log`` messages are kept in ``Plan.diagnostics`` and, with ``echo``,
    written there as they come, a line each. Raises :class:`PlanError` with the program's own
    message when it fails."""
    config = dict(config or {})
    plan_mocks = PlanMocks(
        config,
        fill_outputs,
        invoke_overrides,
        Path(stack_outputs_dir).resolve() if stack_outputs_dir is not None else None,
    )
    monitor = RecordingMonitor(plan_mocks)
    diagnostics = _Diagnostics(echo)
    # A logger of the plan's own, outside logging's registry: a registered one stays there for
    # the life of the process, one per plan, and whatever walks the registry (pytest attaches
    # its capture handler to every non-propagating logger before each test phase) slows down
    # with every plan made.
    logger = logging.Logger(f"modelstore.plan.{id(monitor)}")
    logger.propagate = False
    # The SDK's debug messages (several a resource) are not kept: refused before a record is made.
    logger.setLevel(logging.INFO)
    logger.addHandler(diagnostics)

    settings.ROOT.set(None)
    settings.configure(
        mocks.MockSettings(
            monitor=monitor,
            monitor_features=set(monitor.GetDeploymentInfo(None).supportedFeatures),
            engine=mocks.MockEngine(logger),
            project=project,
            stack=stack,
            dry_run=True,
            organization="organization",
            callbacks=None,
        )
    )
    settings.SETTINGS.outputs.clear()
    pulumi_config.set_all_config(config, secret_keys or [])

    loop = asyncio.new_event_loop()
    loop.set_exception_handler(_quiet_unretrieved)
    calls = _CallsInPlace()
    loop.set_default_executor(calls)
    asyncio.set_event_loop(loop)
    try:
        with _fewer_collections(), _no_stack_traces():
            loop.run_until_complete(run_in_stack(program))
    except Exception as exc:
        raise PlanError(_one_line(exc), exc, [r["urn"] for r in monitor.records]) from exc
    except SystemExit as exc:  # sys.exit() in the program: its plan is not whole
        raise PlanError(_exited(exc), exc, [r["urn"] for r in monitor.records]) from exc
    finally:
        loop.close()
        calls.shutdown()
        asyncio.set_event_loop(None)
        settings.ROOT.set(None)
        logger.removeHandler(diagnostics)

    steps = _steps(monitor.records, stack, project)
    invokes = sorted(plan_mocks.calls, key=lambda c: (c["token"], repr(c["args"])))
    return Plan(
        project=project,
        stack=stack,
        steps=steps,
        outputs=monitor.stack_outputs,
        invokes=invokes,
        diagnostics=sorted(diagnostics.items, key=lambda d: (d["severity"], d["message"])),
        fill_outputs=fill_outputs,
        config=config,
        secret_keys=sorted(secret_keys or []),
        placeholders=dict(sorted(plan_mocks.invented.items())),
    )


GC_ENV = "MODELSTORE_PLAN_GC"
"""Set to ``default`` to plan with the collector as Python sets it (the benchmark compares)."""
YOUNG_THRESHOLD = 20_000
"""Allocations between young collections while a plan runs (Python's default: 700)."""
_host_keeps_heap_frozen = False


def host_keeps_heap_frozen() -> None:
    """Tell the plan engine its host has frozen its heap (``gc.freeze()``) for the rest of the
    process: plans then leave the freeze alone without asking how much is frozen
    (``gc.get_freeze_count()`` walks every frozen object, milliseconds per plan over a test
    session's heap). By default each plan checks, and freezes only when nothing is frozen."""
    global _host_keeps_heap_frozen
    _host_keeps_heap_frozen = True


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """Run a plan with fewer garbage collections: the heap as it stands (imported modules, the
    SDK's machinery) is frozen, so no collection scans it again, and young collections come
    every ``YOUNG_THRESHOLD`` allocations. A plan allocates Outputs and futures by the hundred
    thousand, and full collections over them were 40-46% of a large plan's CPU; what the plan
    computes does not depend on when the collector runs. Both are undone afterwards; a heap
    frozen before the plan (by its host) stays as it was."""
    if os.environ.get(GC_ENV) == "default":
        yield
        return
    thresholds = gc.get_threshold()
    # A host that froze its heap itself (a test session) keeps it frozen, and only that.
    freezing = not _host_keeps_heap_frozen and gc.get_freeze_count() == 0
    if freezing:
        gc.freeze()
    gc.set_threshold(max(thresholds[0], YOUNG_THRESHOLD), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        if freezing:
            gc.unfreeze()


def _empty_stack_trace() -> source_pb2.StackTrace:
    return source_pb2.StackTrace()


@contextlib.contextmanager
def _no_stack_traces() -> Iterator[None]:
    """Run a plan without the stack trace the SDK takes at every registration: it walks the
    whole call stack (``traceback.extract_stack``, each frame's source line and file URI) for
    the stack trace and source position it sends the engine, a fifth of a plan's CPU, and the
    mock monitor reads neither (no plan holds them). The SDK's function is put back after."""
    taken = getattr(sdk_resource, "_get_stack_trace", None)
    if taken is None:  # an SDK that takes none
        yield
        return
    sdk_resource._get_stack_trace = _empty_stack_trace
    try:
        yield
    finally:
        sdk_resource._get_stack_trace = taken


def _quiet_unretrieved(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """A failed plan leaves the runtime's other RPC futures failed and unread, and tasks
    waiting on them pending; the plan's own error already says why. Their "exception was
    never retrieved" (or "destroyed but pending") report would otherwise be logged, with a
    formatted traceback, whenever the garbage collector finds them (in any thread, during a
    later plan or test, or at exit): dropped here. Anything else goes to asyncio's default
    handler."""
    message = str(context.get("message", ""))
    # Futures and tasks of any class (a _GatheringFuture says so by its class name).
    if message.endswith(" exception was never retrieved") or message.startswith(
        "Task was destroyed but it is pending"
    ):
        return
    loop.default_exception_handler(context)


class PlanOptions(TypedDict, total=False):
    """How :func:`plan_program` runs a program, whoever gives the program: the options
    :func:`plan_directory` hands on as given (defaults: no filled outputs, no invoke overrides,
    no echo)."""

    fill_outputs: bool
    invoke_overrides: Mapping[str, placeholders.InvokeHandler] | None
    echo: TextIO | None


def plan_directory(
    directory: str | Path, stack: str | None = None, **options: Unpack[PlanOptions]
) -> Plan:
    """Plan the Pulumi project in ``directory`` for ``stack`` (default: its default stack),
    with :func:`plan_program`'s ``options``."""
    project = load_project(directory)
    stack = stack or project.default_stack()
    config, secret_keys = project.stack_config(stack)
    with _program_context(project):
        return plan_program(
            _runner(project),
            project=project.name,
            stack=stack,
            config=config,
            secret_keys=secret_keys,
            **options,
            stack_outputs_dir=project.stack_config_dir / "stack-outputs",
        )


def _runner(project: Project) -> Program:
    def run() -> None:
        runpy.run_path(str(project.main), run_name="__main__")

    return run


@contextlib.contextmanager
def _program_context(project: Project) -> Iterator[None]:
    """Run with the project directory as cwd and the program's directory importable, as the
    Pulumi language host does; restore both afterwards."""
    program_dir = project.main if project.main.is_dir() else project.main.parent
    old_cwd = os.getcwd()
    old_path = list(sys.path)
    os.chdir(project.directory)
    sys.path.insert(0, str(program_dir))
    try:
        yield
    finally:
        os.chdir(old_cwd)
        sys.path[:] = old_path


def _exited(exc: SystemExit) -> str:
    if isinstance(exc.code, str):
        return _one_line(Exception(f"the program exited: {exc.code}"))
    return f"the program exited with code {exc.code or 0} before its plan was complete"


def _one_line(exc: BaseException) -> str:
    """The error's message with its white space folded, a line per problem (an input error
    may carry several)."""
    text = str(exc).strip() or type(exc).__name__
    lines = text.splitlines() if isinstance(exc, ModelStoreInputError) else [text]
    return "\n".join(" ".join(line.split()) for line in lines if line.strip())


def _steps(records: list[dict[str, Any]], stack: str, project: str) -> list[dict[str, Any]]:
    """Preview steps in a deterministic order: parents and dependencies first, ties broken by
    URN (registrations arrive as each resource's inputs resolve, not in the program's order)."""
    default_providers: dict[str, dict[str, Any]] = {}
    for rec in records:
        if (
            rec["custom"]
            and not rec["provider"]
            and not rec["type"].startswith("pulumi:providers:")
        ):
            package = rec["type"].split(":", 1)[0]
            version = rec["version"]
            name = (
                f"default_{version.replace('.', '_').replace('-', '_')}" if version else "default"
            )
            urn = f"urn:pulumi:{stack}::{project}::pulumi:providers:{package}::{name}"
            rec["provider"] = f"{urn}::{UNKNOWN}"
            default_providers.setdefault(
                urn,
                {
                    "urn": urn,
                    "type": f"pulumi:providers:{package}",
                    "name": name,
                    "custom": True,
                    "parent": "",
                    "inputs": {"version": version} if version else {},
                    "outputs": {},
                    "id": "",
                    "dependencies": [],
                    "propertyDependencies": {},
                    "provider": "",
                    "version": version,
                    **_no_options(),
                    "aliases": [],
                    "importId": "",
                    "op": "create",
                },
            )
    all_records = {r["urn"]: r for r in [*default_providers.values(), *records]}
    order = _topological(all_records)
    steps = []
    for urn in order:
        rec = all_records[urn]
        state = {
            "urn": urn,
            "custom": rec["custom"],
            "type": rec["type"],
            "id": rec["id"] or (UNKNOWN if rec["custom"] else ""),
            "parent": rec["parent"],
            "inputs": rec["inputs"],
            "outputs": rec["outputs"],
            "provider": rec["provider"],
            "protect": rec["protect"],
            "retainOnDelete": rec["retainOnDelete"],
            "deleteBeforeReplace": rec["deleteBeforeReplace"],
            "dependencies": sorted(rec["dependencies"]),
            "propertyDependencies": {
                k: sorted(v) for k, v in sorted(rec["propertyDependencies"].items())
            },
            "ignoreChanges": rec["ignoreChanges"],
            "replaceOnChanges": rec["replaceOnChanges"],
            "aliases": rec["aliases"],
        }
        if rec.get("replaceWith"):  # omitted when empty, as in the engine's own state
            state["replaceWith"] = sorted(rec["replaceWith"])
        if rec["importId"]:
            state["importID"] = rec["importId"]
        steps.append({"op": rec["op"], "urn": urn, "provider": rec["provider"], "newState": state})
    return steps


def _topological(records: Mapping[str, dict[str, Any]]) -> list[str]:
    def before(rec: dict[str, Any]) -> set[str]:
        deps = set(rec["dependencies"]) | {rec["parent"]}
        if rec["provider"]:
            deps.add(rec["provider"].rsplit("::", 1)[0])
        return {d for d in deps if d in records and d != rec["urn"]}

    waiting = {urn: before(rec) for urn, rec in records.items()}
    order: list[str] = []
    done: set[str] = set()
    while waiting:
        ready = sorted(urn for urn, deps in waiting.items() if deps <= done)
        if not ready:  # a cycle cannot come out of a real program; keep going deterministically
            ready = [min(waiting)]
        urn = ready[0]
        order.append(urn)
        done.add(urn)
        del waiting[urn]
    return order
