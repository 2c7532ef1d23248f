#!/usr/bin/env bash
# Every example builds as a user would copy it (issue 44, part 7): each is copied into a fresh
# crate of its own outside the workspace, in a temporary directory (examples/NAME.rs as
# src/main.rs, or the files of examples/NAME/ into src/, and a folder examples/NAME/ beside an
# examples/NAME.rs, such as the headers of candle_style, at the same place in the crate), with
# a Cargo.toml that depends on the library by path as the README's Install says, plus the crates
# the example names itself (ndarray, cudarc, tokio: the root package's dependencies, with the
# workspace's versions and features) and the library features of its `required-features`; then
# `cargo build` (debug) builds it. One target directory serves every copy, so the dependencies
# are built once per set of features. The workspace's Cargo.lock is copied in, so the copies
# build the versions the workspace is tested with.
#
#   bash scripts/check_examples_standalone.sh [NAME...]   (all the examples when none is named)
#
# Set STANDALONE_TARGET_DIR to keep the target directory between runs (it is removed otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-examples-standalone.XXXXXX")
trap 'rm -rf "$work"' EXIT
target=${STANDALONE_TARGET_DIR:-$work/target}
python3 - "$root" "$work/crates" "$@" <<'EOF'
import os, re, shutil, sys, tomllib

root, out, only = sys.argv[1], sys.argv[2], sys.argv[3:]
manifest = tomllib.load(open(os.path.join(root, "Cargo.toml"), "rb"))
ws_deps = manifest["workspace"]["dependencies"]
package_deps = manifest["dependencies"]
features = manifest.get("features", {})
required = {e["name"]: e.get("required-features", []) for e in manifest.get("example", [])}


def dep_spec(name):
    """The root package's dependency `name` as a user's crate writes it: the workspace's
    version, default-features and features, and the package's own features."""
    spec = dict(package_deps[name])
    if spec.pop("workspace", False):
        base = ws_deps[name]
        base = {"version": base} if isinstance(base, str) else dict(base)
        base["features"] = base.get("features", []) + spec.get("features", [])
        spec = {**base, **{k: v for k, v in spec.items() if k != "features"}}
    spec.pop("optional", None)
    if not spec.get("features"):
        spec.pop("features", None)
    return spec


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"


examples = {}
for entry in sorted(os.listdir(os.path.join(root, "examples"))):
    path = os.path.join(root, "examples", entry)
    if entry.endswith(".rs"):
        examples[entry[:-3]] = path
    elif os.path.isfile(os.path.join(path, "main.rs")):
        examples[entry] = path
unknown = [n for n in only if n not in examples]
if unknown:
    sys.exit(f"no example named {', '.join(unknown)}")
for name, path in examples.items():
    if only and name not in only:
        continue
    crate = os.path.join(out, name)
    src = os.path.join(crate, "src")
    if os.path.isdir(path):
        shutil.copytree(path, src)
        text = "".join(
            open(os.path.join(d, f)).read()
            for d, _, fs in os.walk(path) for f in fs if f.endswith(".rs")
        )
        # Files other than Rust the example names by a path from its crate's root stay where
        # they were.
        if any(not f.endswith(".rs") for _, _, fs in os.walk(path) for f in fs):
            shutil.copytree(path, os.path.join(crate, "examples", name))
    else:
        os.makedirs(src)
        shutil.copy(path, os.path.join(src, "main.rs"))
        text = open(path).read()
        beside = os.path.join(root, "examples", name)
        if os.path.isdir(beside):
            shutil.copytree(beside, os.path.join(crate, "examples", name))
    deps = {"gpu-runtime": {"path": os.path.join(root, "gpu-runtime")}}
    # The crates the example names itself, not through the library's re-exports
    # (`gpu_runtime::ndarray::`, `use gpu_runtime::{ndarray::Array2, ...}`).
    own = re.sub(r"gpu_runtime::\{[^}]*\}", "", text)
    for dep in package_deps:
        if dep != "gpu-runtime" and re.search(r"(?<![\w:])" + dep.replace("-", "_") + r"::", own):
            deps[dep] = dep_spec(dep)
    # Its required features, as the features of the dependencies they enable.
    for feature in required.get(name, []):
        for enabled in features.get(feature, []):
            dep, _, f = enabled.partition("/")
            if f and dep in deps:
                deps[dep].setdefault("features", []).append(f)
    lines = [
        "[package]",
        f'name = "{name.replace("_", "-")}"',
        'version = "0.1.0"',
        'edition = "2021"',
        "publish = false",
        "",
        "[dependencies]",
    ]
    for dep, spec in deps.items():
        lines.append(f"{dep} = {toml_value(spec)}")
    open(os.path.join(crate, "Cargo.toml"), "w").write("\n".join(lines) + "\n")
    shutil.copy(os.path.join(root, "Cargo.lock"), crate)
EOF
failed=()
for crate in "$work"/crates/*/; do
  name=$(basename "$crate")
  echo "examples/$name, alone in a crate:" >&2
  if ! cargo build --quiet --manifest-path "$crate/Cargo.toml" --target-dir "$target"; then
    sed 's/^/    /' "$crate/Cargo.toml" >&2
    failed+=("$name")
  fi
done
if ((${#failed[@]})); then
  echo "these examples do not build alone: ${failed[*]}" >&2
  exit 1
fi
echo "every example builds alone, in a crate of its own that depends on gpu-runtime by path" >&2
