#!/usr/bin/env python3
"""Runs replay packages on a GPU in one Python process, for REPLAY.md's
accuracy table: each package's own replay.py with a profiler trace of its
calls (the kernels' own times), and optionally another replay.py (an older
one, say) on the same inputs, so both timings come from one run.

    replay_timing.py OUT PACKAGE.tar.gz... [--compare OTHER_REPLAY_PY]

OUT gets, per package, NAME.json (the figures), NAME.trace.json (the
profile) and, with --compare, NAME.compare.json. One process spares each
package PyTorch's start-up; a package that fails is logged and skipped.
"""

import argparse
import importlib.util
import os
import sys
import tarfile
import tempfile
import time
import traceback


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(module, argv):
    try:
        return module.main(argv)
    except SystemExit as exit_:
        return exit_.code
    except Exception:  # noqa: BLE001 - one bad package must not stop the others
        traceback.print_exc()
        return "exception"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("packages", nargs="+")
    parser.add_argument("--compare", help="another replay.py to time the same calls with")
    parser.add_argument("--iters", default="50")
    parser.add_argument("--warmup", default="10")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    other = load(args.compare, "replay_compared") if args.compare else None
    work = tempfile.mkdtemp()
    timing = ["--iters", args.iters, "--warmup", args.warmup]
    for index, package in enumerate(args.packages):
        name = os.path.basename(package)[: -len(".tar.gz")]
        with tarfile.open(package) as archive:
            archive.extractall(work, filter="data")
        folder = os.path.join(work, name)
        ir = os.path.join(folder, "replay_ir.json")
        began = time.monotonic()
        own = load(os.path.join(folder, "replay.py"), "replay_%d" % index)
        code = run(own, ["--ir", ir, *timing, "--json", os.path.join(args.out, name + ".json"),
                         "--profile", os.path.join(args.out, name + ".trace.json")])
        compared = None
        if other is not None:
            compared = run(other, ["--ir", ir, *timing, "--json", os.path.join(args.out, name + ".compare.json")])
        print("%s: exit %s, compared exit %s, %.1f s" % (name, code, compared, time.monotonic() - began), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
