"""The auditor's probe: runs first in the experiment's interpreter, then runs the agent's script.

This file is not imported by the auditor: its source is handed to the chosen
interpreter as ``python -I -c <this source> SCRIPT ARGS...`` by the sandbox's
supervisor, so it is never looked up on a path the workspace could shadow, and
``-I`` keeps the workspace out of ``sys.path`` (no cwd, no script folder, no
``PYTHON*`` variables, no user site, hence no workspace ``sitecustomize``,
``usercustomize`` or ``.pth``) until the probe is in place.  Standard library
only, Python 3.8+.

It watches imports (a meta path finder at the front of ``sys.meta_path``) and,
only once the script imports torch, numpy.random or random, wraps them:
optimizer steps (torch's global step hook; a step counts when a parameter has a
gradient), module forward calls (torch's global forward hook), autograd
backward passes, the devices tensors were computed on, and every seed set
through the seeding functions; each seed is shifted by the run's offset
(``--replicate``).  At exit it writes one record, signed with a per-run key it
read (and whose pipe it closed) before the script started, to a pipe its
supervisor reads.  A record that is missing, unsigned, or says the probe was
undone reads as "not observed": never as training.
"""

from __future__ import annotations  # annotations stay unevaluated: the 3.8 interpreters read them too

TYPE_CHECKING = False  # typing is not imported at run time: the probe's start-up stays light
if TYPE_CHECKING:
    from collections.abc import Callable


def _auditor_probe():  # noqa: C901 -- one closure keeps the key out of every module namespace
    import atexit
    import hashlib
    import hmac
    import json
    import os
    import sys
    import threading

    spec = os.environ.pop("AUDITOR_PROBE", "")
    try:
        token_fd, channel_fd, offset = (int(x) for x in spec.split(","))
    except ValueError:
        token_fd, channel_fd, offset = -1, -1, 0
    key = b""
    if token_fd >= 0:
        try:
            key = os.read(token_fd, 64)
        finally:
            os.close(token_fd)
    if channel_fd >= 0:
        os.set_inheritable(channel_fd, False)  # subprocesses do not get the channel
        os.set_blocking(channel_fd, False)  # a channel the script filled never blocks the exit
    signer = hmac.new(key, digestmod=hashlib.sha256)
    del key
    pid = os.getpid()

    class Seen:
        """What the run did, as the record says it (one typed object: the closure's only mutable state)."""

        def __init__(self) -> None:
            self.torch_imported = False
            self.torch_version: str | None = None
            self.optimizer_steps = 0
            self.forward_calls = 0
            self.backward_calls = 0
            self.devices: set[str] = set()
            self.seeds_set: list[dict[str, object]] = []
            self.seeds_total = 0
            self.seed_offset = offset
            self.frameworks: list[str] = []
            self.tampered: list[str] = []

        def record(self) -> dict[str, object]:
            return dict(vars(self), devices=sorted(self.devices))

    state = Seen()
    checks: list[tuple[str, Callable[[], bool]]] = []  # (what, still-in-place test) run at exit

    def reaches(current, wrapper):
        """``current`` is ``wrapper`` or wraps it (torch._dynamo wraps torch.manual_seed with functools.wraps)."""
        for _ in range(8):
            if current is wrapper:
                return True
            current = getattr(current, "__wrapped__", None)
        return False

    local = threading.local()
    seed_limit = 64

    # -- seeds -----------------------------------------------------------------------------

    def shifted(seed, modulus):
        if offset == 0 or seed is None or isinstance(seed, bool):
            return seed
        if isinstance(seed, str):
            return seed + f"#{offset}"
        if isinstance(seed, (bytes, bytearray)):
            return seed + f"#{offset}".encode("ascii")
        if isinstance(seed, (list, tuple)):
            return type(seed)(shifted(s, modulus) for s in seed)
        try:
            value = seed.__index__()
        except (AttributeError, TypeError):
            return seed  # a SeedSequence or generator: passed on as it is
        value += offset
        return value % modulus if modulus and value >= 0 else value

    def shown(seed):
        if seed is None or isinstance(seed, (bool, int, float, str)):
            return seed if not isinstance(seed, str) else seed[:64]
        if isinstance(seed, (list, tuple)):
            return [shown(s) for s in seed[:8]]
        try:
            return seed.__index__()
        except (AttributeError, TypeError):
            return type(seed).__name__

    def seeding(name, call, seed, modulus):
        """Call ``call(seed)`` with the seed shifted; nested seeding calls pass through untouched."""
        if getattr(local, "depth", 0):
            return call(seed)
        new = shifted(seed, modulus)
        if seed is not None:
            state.seeds_total += 1
            if len(state.seeds_set) < seed_limit:
                state.seeds_set.append({"call": name, "seed": shown(seed), "used": shown(new)})
        local.depth = 1
        try:
            return call(new)
        finally:
            local.depth = 0

    def seed_function(name, fn, modulus, index=0, keyword="seed"):
        def wrapper(*args, **kwargs):
            if len(args) > index:
                return seeding(name, lambda s: fn(*args[:index], s, *args[index + 1 :], **kwargs), args[index], modulus)
            seed = kwargs.pop(keyword, None)
            return seeding(name, lambda s: fn(*args, **{keyword: s}, **kwargs), seed, modulus)

        wrapper.__name__ = getattr(fn, "__name__", name)
        wrapper.__qualname__ = getattr(fn, "__qualname__", name)
        wrapper.__doc__ = getattr(fn, "__doc__", None)
        return wrapper

    def still_wrapped(owner, attribute: str, wrapper: object) -> Callable[[], bool]:
        return lambda: reaches(getattr(owner, attribute, None), wrapper)

    def replace(owner, attribute, name, modulus, index=0, keyword="seed"):
        original = getattr(owner, attribute, None)
        if original is None:
            return
        wrapper = seed_function(name, original, modulus, index, keyword)
        setattr(owner, attribute, wrapper)
        checks.append((name, still_wrapped(owner, attribute, wrapper)))

    def subclass(base: type, module: str, name: str, **methods: object) -> type:
        """A subclass of ``base`` that passes for it (made with type(): the base is known only at run time)."""
        return type(name, (base,), dict(methods, __module__=module, __qualname__=name))

    # -- torch -----------------------------------------------------------------------------

    def on_step(optimizer, args, kwargs):
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    state.optimizer_steps += 1
                    state.devices.add(str(p.device))
                    return

    def on_forward(module, inputs, output):
        state.forward_calls += 1
        device = getattr(output, "device", None)
        if device is not None:
            state.devices.add(str(device))

    def counted(fn):
        def wrapper(*args, **kwargs):
            state.backward_calls += 1
            tensor = args[0] if args else None
            if isinstance(tensor, (list, tuple)) and tensor:
                tensor = tensor[0]
            device = getattr(tensor, "device", None)
            if device is not None:
                state.devices.add(str(device))
            return fn(*args, **kwargs)

        wrapper.__name__, wrapper.__doc__ = fn.__name__, fn.__doc__
        return wrapper

    def patch_torch(torch):
        state.torch_imported = True
        state.torch_version = str(getattr(torch, "__version__", "")) or None
        import torch.nn.modules.module as module_mod
        import torch.optim.optimizer as optim_mod

        step_handle = optim_mod.register_optimizer_step_post_hook(on_step)
        forward_handle = module_mod.register_module_forward_hook(on_forward)
        steps, forwards = optim_mod._global_optimizer_post_hooks, module_mod._global_forward_hooks
        checks.append(("optimizer step hook", lambda: steps.get(step_handle.id) is on_step))
        checks.append(("module forward hook", lambda: forwards.get(forward_handle.id) is on_forward))
        for attribute in ("backward", "grad"):
            wrapper = counted(getattr(torch.autograd, attribute))
            setattr(torch.autograd, attribute, wrapper)
            checks.append(("torch.autograd." + attribute, still_wrapped(torch.autograd, attribute, wrapper)))
        manual = seed_function("torch.manual_seed", torch.manual_seed, 2**63)
        torch.manual_seed = torch.random.manual_seed = manual
        checks.append(("torch.manual_seed", lambda: reaches(torch.manual_seed, manual)))
        for name in ("manual_seed", "manual_seed_all"):
            replace(torch.cuda, name, "torch.cuda." + name, 2**63)
        base = torch.Generator

        def manual_seed(self, seed):
            return seeding("torch.Generator.manual_seed", lambda s: base.manual_seed(self, s), seed, 2**63)

        Generator = subclass(base, "torch", "Generator", manual_seed=manual_seed)
        torch.Generator = Generator
        checks.append(("torch.Generator", lambda: torch.Generator is Generator))

    # -- numpy and random ------------------------------------------------------------------

    def patch_numpy_random(module):
        replace(module, "seed", "numpy.random.seed", 2**32)
        replace(module, "default_rng", "numpy.random.default_rng", 2**63)
        base = module.RandomState

        def __init__(self, seed=None):
            seeding("numpy.random.RandomState", lambda s: base.__init__(self, s), seed, 2**32)

        def seed(self, seed=None):
            return seeding("numpy.random.RandomState.seed", lambda s: base.seed(self, s), seed, 2**32)

        RandomState = subclass(base, "numpy.random", "RandomState", __init__=__init__, seed=seed)
        module.RandomState = RandomState
        checks.append(("numpy.random.RandomState", lambda: module.RandomState is RandomState))

    def patch_random(module):
        replace(module.Random, "seed", "random.seed", 0, index=1, keyword="a")
        instance = getattr(module, "_inst", None)
        if instance is not None:
            module.seed = instance.seed  # the module's seed() is its shared instance's, bound at import
            checks.append(("random.seed", lambda: getattr(module.seed, "__func__", None) is module.Random.seed))

    patches = {"torch": patch_torch, "numpy.random": patch_numpy_random, "random": patch_random}
    noted = ("jax", "sklearn", "tensorflow", "keras", "flax")

    def after_import(name, module):
        if name in noted:
            state.frameworks.append(name)
            return
        try:
            patches[name](module)
        except Exception as exc:  # noqa: BLE001 -- a module we cannot wrap is never observed as trained
            state.tampered.append(f"{name} could not be probed ({type(exc).__name__}: {str(exc)[:120]})")

    class Finder:
        """Wraps the loader of the watched modules so that the patch runs right after they execute."""

        def find_spec(self, name, path=None, target=None):
            if name not in patches and name not in noted:
                return None
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                if finder is self or find is None:
                    continue
                spec = find(name, path, target)
                if spec is not None:
                    break
            else:
                return None
            execute = getattr(spec.loader, "exec_module", None)
            if execute is None:
                return spec

            def exec_module(module):
                execute(module)
                after_import(name, module)

            try:
                spec.loader.exec_module = exec_module
            except (AttributeError, TypeError):
                return spec
            return spec

        def invalidate_caches(self):
            pass

    finder = Finder()
    sys.meta_path.insert(0, finder)
    for name in list(patches) + list(noted):
        if name in sys.modules:
            after_import(name, sys.modules[name])

    # -- the record ------------------------------------------------------------------------

    def write_record():
        if os.getpid() != pid or channel_fd < 0:
            return  # a forked child: only the experiment's own process reports
        torch = sys.modules.get("torch")
        if torch is not None and not state.torch_imported:
            state.tampered.append("torch was imported without passing the probe")
        for what, intact in checks:
            try:
                ok = intact()
            except Exception:  # noqa: BLE001
                ok = False
            if not ok:
                state.tampered.append(what + " was replaced or removed")
        record = state.record()
        payload = json.dumps(record, sort_keys=True, default=str).encode("utf-8")
        mac = signer.copy()
        mac.update(payload)
        line = payload + b"\t" + mac.hexdigest().encode("ascii") + b"\n"
        try:
            os.write(channel_fd, line)
        except OSError:
            pass

    atexit.register(write_record)


def _auditor_run_script():
    """Run the script like ``python SCRIPT ARGS`` would, in the real ``__main__`` module."""
    import os
    import sys

    main = sys.modules["__main__"]
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    with open(script, "rb") as f:
        code = compile(f.read(), script, "exec")
    namespace = main.__dict__
    builtins = namespace["__builtins__"]
    namespace.clear()
    namespace.update(__name__="__main__", __file__=script, __builtins__=builtins, __doc__=None)
    namespace.update(__spec__=None, __package__=None, __loader__=None, __cached__=None)
    exec(code, namespace)


_auditor_probe()
_auditor_run_script()
