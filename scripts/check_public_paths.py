#!/usr/bin/env python3
"""Checks that every public item of the workspace's library crates has one public path.

    python3 scripts/check_public_paths.py                  # check; exit status 1 on a double path
    python3 scripts/check_public_paths.py --keep           # keep the JSON's target dir for next time
    python3 scripts/check_public_paths.py --target-dir D   # build the JSON under D

An item a user can name two ways is two names to learn, to search for and to keep when the code
moves: each public item has one path, the one the guide and the examples use.

How: rustdoc (nightly) writes each crate's public API as JSON; the script walks the public module
tree from the crate root, through modules' items and `use` items (globs included, and re-exports
of items of other crates, which count like the crate's own), collects every path that reaches
each item, and lists each item reachable at two or more paths, with all of them.

Not counted (the walk does not enter them):
- the `prelude` module: a prelude is by design a second path, glob-imported for convenience;
- `#[doc(hidden)]` items and modules (the macros' support code, `__private_v0_1`, `__testing`):
  rustdoc leaves them out of the JSON;
- what belongs to a type or trait (methods, associated items, enum variants, fields), which is
  named through its owner.

The JSON is built in a target directory of its own (nightly's artefacts cannot be shared with a
stable build), removed at the end unless --keep: the CI machine's disk is small.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# The library crates and the file rustdoc names its JSON after (the crate name, `_` for `-`).
# The examples (the root package, gpu-examples) and the suite (gpu-suite, tests/) are not
# published and are not checked.
CRATES = ["gpu-runtime", "gpu-cuda-source", "gpu-macros-core", "gpu-macros"]

# Modules whose contents are by design a second path (see the module doc).
EXEMPT_MODULES = {"prelude"}

# The rustdoc JSON format the walk was written against (nightly of 2026-10); a later one
# usually reads the same, and a failure names the format it met.
FORMAT_VERSION = 61


def build_json(crate, target_dir):
    """Runs rustdoc with JSON output for `crate` (all features) and returns the parsed JSON."""
    cmd = ["cargo", "+nightly", "rustdoc", "-p", crate, "--all-features", "--lib", "--quiet",
           "--target-dir", target_dir, "--", "-Z", "unstable-options", "--output-format", "json",
           # Broken intra-doc links and the like are `cargo doc`'s check in CI, not this one's.
           "-A", "rustdoc::all"]
    subprocess.run(cmd, cwd=REPO, check=True)
    with open(os.path.join(target_dir, "doc", crate.replace("-", "_") + ".json")) as f:
        return json.load(f)


def collect_paths(doc):
    """Returns {item id: set of public paths} for one crate's rustdoc JSON."""
    index, ext_paths = doc["index"], doc["paths"]
    paths = {}

    def kind(item):
        return next(iter(item["inner"]))

    def record(item_id, path):
        paths.setdefault(item_id, set()).add(path)

    def walk(module_id, prefix, stack):
        # `stack` holds the modules being walked, so that a module that re-exports an ancestor
        # (`pub use super::*`, `pub use crate as x`) does not send the walk round for ever.
        if module_id in stack:
            return
        stack = stack | {module_id}
        for child_id in index[str(module_id)]["inner"]["module"]["items"]:
            child = index.get(str(child_id))
            if child is None or child["visibility"] != "public":
                continue
            k = kind(child)
            if k != "use":
                name = child["name"]
                record(child_id, f"{prefix}::{name}")
                if k == "module" and name not in EXEMPT_MODULES:
                    walk(child_id, f"{prefix}::{name}", stack)
                continue
            use = child["inner"]["use"]
            target = use["id"]
            if target is None:
                # A primitive type or something rustdoc could not resolve: not an item to count.
                continue
            local = index.get(str(target))
            if use["is_glob"]:
                # `pub use m::*`: m's public items are also items of this module. A glob of an
                # enum's variants or of another crate's module is not followed (the first is
                # exempt; for the second, rustdoc does not list that crate's items).
                if local is not None and kind(local) == "module":
                    walk(target, prefix, stack)
                continue
            path = f"{prefix}::{use['name']}"
            record(target, path)
            if local is not None and kind(local) == "module" and use["name"] not in EXEMPT_MODULES:
                walk(target, path, stack)

    root = doc["root"]
    walk(root, index[str(root)]["name"], frozenset())

    def describe(item_id):
        # Where the item is defined, to name it in the report: its file for the crate's own, its
        # crate path for another crate's.
        item = index.get(str(item_id))
        if item is not None and item.get("span"):
            span = item["span"]
            return f"{span['filename']}:{span['begin'][0]}"
        summary = ext_paths.get(str(item_id))
        return "::".join(summary["path"]) if summary else f"id {item_id}"

    return paths, describe


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target-dir", default=os.path.join(REPO, "target", "public-paths"))
    parser.add_argument("--keep", action="store_true", help="do not remove the target dir")
    args = parser.parse_args()

    start = time.monotonic()
    items = npaths = 0
    problems = []
    try:
        for crate in CRATES:
            doc = build_json(crate, args.target_dir)
            try:
                paths, describe = collect_paths(doc)
            except (KeyError, TypeError, StopIteration):
                # rustdoc's JSON is unstable: say which format broke the walk, not just where.
                print(f"{crate}: rustdoc's JSON format {doc.get('format_version')} is not the "
                      f"one this script reads ({FORMAT_VERSION}); update collect_paths",
                      file=sys.stderr)
                raise
            items += len(paths)
            npaths += sum(len(p) for p in paths.values())
            for item_id, ps in sorted(paths.items(), key=lambda kv: sorted(kv[1])):
                if len(ps) > 1:
                    problems.append(f"{describe(item_id)} is public at {len(ps)} paths:\n"
                                    + "".join(f"    {p}\n" for p in sorted(ps)))
    finally:
        if not args.keep:
            shutil.rmtree(args.target_dir, ignore_errors=True)
    if problems:
        print(f"{len(problems)} public items have more than one path (keep the one the guide "
              "and examples use; a module that exists only to be glob-re-exported can be "
              "private):\n", file=sys.stderr)
        print("\n".join(problems), file=sys.stderr)
        return 1
    print(f"public paths: {items} items in {len(CRATES)} crates, {npaths} paths, one each "
          f"({time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
