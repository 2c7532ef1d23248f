#!/usr/bin/env python3
"""Checks that gpu-runtime's modules form layers: no import cycle between any two modules
(files), and no module of a lower layer importing one of a higher layer.

    python3 scripts/check_layers.py            # check; exit status 1 on a cycle or a violation
    python3 scripts/check_layers.py --graph    # also print the import graph between layers
    python3 scripts/check_layers.py --tree     # also print the folders, files and line counts

Every path a file names is resolved to the module (file) that defines it: `use` trees,
`crate::`, `super::` and `$crate::` paths in code and macros. A file's own `#[cfg(test)]` test
module, inline or in its own file, does not count (tests may use anything), and `mod x;` counts as the parent using x.
Paths through the crate root (`crate::Context`, the re-exports of lib.rs) count as using the
root, which declares everything: inside the crate, name an item by the module that defines it.

The layers, lowest first, are the top-level modules in LAYERS below; ARCHITECTURE.md says what
each holds. The lowest, `sync`, holds the crate's locks, each with a rank in one order of
nesting (sync/rank.rs, checked in debug builds). A layer in LEAVES is optional (a cargo feature): it may use the layers below it, and
nothing but the crate root may use it.

Inside a layer, folders can be layers too (SUBLAYERS): `gpuarray`'s folders, lowest first, with
the families of operations side by side (one rank, using none of each other), and `driver`'s
rooms (its folders and its single-file modules), from the thin driver calls up. A module of a
folder may use its own folder and the folders of lower ranks; the layer's mod.rs, which
declares the folders and re-exports the public items, may use them all.

The workspace's other crates (OTHER_CRATES) are checked for import cycles among their modules.

Raw driver calls live only in `driver/calls/`, one thin function per driver call (as cudarc
keeps all of its in `result.rs`): a call of a `cudarc::driver::sys` function (`sys::cuX(`,
`sys::cuX::<T>(`, `sys::$f(` in a macro, through any name the file gives that module, or a `cuX`
imported from it), any use of cudarc's own `cudarc::driver::result` layer, and the driver's
error descriptions through cudarc's `DriverError` (`error_string`, `error_name`), anywhere else
in gpu-runtime (tests included, the rest of `driver/` too), is a problem, named by file and
line; such calls go through the thin functions of `driver/calls/`.

Every lock has a rank: a `Mutex`, `RwLock` or `Condvar` of `std::sync`, `parking_lot` or
`loom::sync` named anywhere in gpu-runtime's code but `sync/` (tests and the model check's own
stand-ins aside) is a problem, named by file and line; the crate's locks are `crate::sync`'s.
"""

import os
import re
import sys
from collections import defaultdict

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu-runtime", "src")

# Lowest first: a module may use modules of its own layer and of lower layers only.
LAYERS = ["sync", "error", "types", "compiler", "driver", "tools", "nccl", "launch", "gpuarray", "dlpack", "crate"]

# Layers beside the stack rather than in it: optional (behind a cargo feature), so no other
# layer may use them; only the crate root re-exports them. `nccl` (the `nccl` feature) sits on
# `driver` and `tools` and is beside `launch`; `dlpack` (the `dlpack` feature) sits on
# `gpuarray` and everything below it.
LEAVES = {"nccl", "dlpack"}

# Folders inside a layer, lowest first: a module of a folder may use modules of its own folder
# and of the folders of lower ranks; the folders of one rank stand side by side and use none of
# each other. ARCHITECTURE.md says what each holds. In `gpuarray`: element types and promotion;
# the array; kernel generation and the registry; the families of operations (copies, linear
# algebra, random fills, reductions, scans); elementwise arithmetic and math, whose `math`
# module also names the reductions' `any`/`all`.
#
# In `driver` (folders and single files alike): the thin driver calls (and the plain data of
# device attributes, and the opening of other libraries); the process's kernel fault and the
# thread's current context; driver results as errors; initialisation; devices and versions;
# stream ordering; contexts; streams and the profiler; device memory and the copies (with what
# they take from the host) beside the stream operations; host memory, modules, textures and
# IPC; host-copy futures, cudarc interop and cuBLAS (the `cublas` feature) on top.
SUBLAYERS = {
    "gpuarray": [("elements",), ("array",), ("kernels",), ("copy", "linalg", "random", "reduce", "scan"), ("sort",), ("expr",)],
    "driver": [
        ("calls", "attributes", "library"),
        ("fault", "current"),
        ("result",),
        ("init",),
        ("device", "version"),
        ("ordering",),
        ("context",),
        ("stream", "profiler"),
        ("memory", "stream_ops"),
        ("host", "module", "texture", "ipc"),
        ("future", "cudarc_interop", "cublas"),
    ],
}


def module_of(path, root=ROOT):
    """The module path (a tuple) of a source file: src/a/b.rs -> ('a', 'b')."""
    rel = os.path.relpath(path, root)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib"):
        rel = rel[:-1]
    return tuple(rel)


def strip(text):
    """The text without comments, string and char literals (kept as empty strings), with the
    newlines of what was removed kept, so that offsets still give the source's lines."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            start, depth, i = i, 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            out.append(" " + "\n" * text.count("\n", start, i))
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            stop = n if end < 0 else end + 1 + len(hashes)
            out.append('""' + "\n" * text.count("\n", i, stop))
            i = stop
        elif c == '"' and (i == 0 or text[i - 1] != "'"):
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]):
            m = re.match(r"'(\\.|[^\\'])'", text[i:i + 4])
            out.append("' '")
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


TEST_MOD = re.compile(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;")


def without_test_modules(text):
    """The text without `#[cfg(test)] mod name { ... }` blocks and `#[cfg(test)] mod name;`,
    with their newlines kept, so that offsets still give the source's lines."""
    text = TEST_MOD.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", text)
        if not m:
            return text
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        text = text[:m.start()] + "\n" * text.count("\n", m.start(), i) + text[i:]


def use_paths(tree, prefix):
    """Expands a use tree (`a::{b, c::d as e, f::*}`) to full paths (lists of segments)."""
    tree = tree.strip()
    m = re.match(r"^([\w$]+(?:\s*::\s*[\w$]+)*)\s*(::\s*(.*))?$", tree, re.S)
    if tree.startswith("{"):
        inner, depth, parts, cur = tree[1:-1], 0, [], ""
        for ch in inner:
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
                continue
            depth += {"{": 1, "}": -1}.get(ch, 0)
            cur += ch
        parts.append(cur)
        out = []
        for p in parts:
            if p.strip():
                out += use_paths(p, prefix)
        return out
    if not m:
        return [prefix] if prefix else []
    segs = [s.strip() for s in m.group(1).split("::")]
    segs = [s for s in segs if s]
    rest = m.group(3)
    if rest is None:
        # `a::b as c`, `a::b`, `self`
        last = segs[-1].split()[0] if segs else ""
        segs = segs[:-1] + ([last] if last and last != "self" else [])
        return [prefix + segs]
    rest = rest.strip()
    if rest == "*":
        return [prefix + segs]
    return use_paths(rest, prefix + segs)


def referenced_paths(text):
    """Every path a file names that starts at `crate`, `$crate`, `super` or `self`."""
    paths = []
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        paths += use_paths(m.group(1), [])
    for m in re.finditer(r"(\$crate|\bcrate|\bsuper|\bself)((?:\s*::\s*\w+)+)", text):
        paths.append([m.group(1)] + [s.strip() for s in m.group(2).split("::") if s.strip()])
    return paths


def resolve(path, here, modules):
    """The module a path starting at crate/$crate/super/self names, seen from module `here`;
    None for paths into other crates."""
    if not path:
        return None
    head, rest = path[0], path[1:]
    if head in ("crate", "$crate"):
        base = ()
    elif head == "super":
        base = here[:-1]
        while rest and rest[0] == "super":
            base, rest = base[:-1], rest[1:]
    elif head == "self":
        base = here
    else:
        return None
    best = base if base in modules else None
    cur = base
    for seg in rest:
        cur = cur + (seg,)
        if cur in modules:
            best = cur
        else:
            break
    return best


# Files of the crate root other than lib.rs: the public API's front (the prelude, what the
# macro's generated code calls, the guide's chapters: documentation, no items).
ROOT_FILES = {"prelude", "private", "testing", "guide"}


def layer(mod):
    top = mod[0] if mod else "crate"
    if top in ROOT_FILES:
        top = "crate"
    return LAYERS.index(top) if top in LAYERS else None


def import_graph(root):
    """The modules of the crate whose sources are under `root` (tests left out), their files,
    and the imports between them."""
    files = {}
    for d, _, names in os.walk(root):
        for n in names:
            if n.endswith(".rs"):
                p = os.path.join(d, n)
                files[module_of(p, root)] = p
    # Test modules in their own files (`#[cfg(test)] mod tests;`) do not count either, nor the
    # modules a test module declares (a folder of tests).
    tests = [mod + (m.group(1),) for mod, path in files.items()
             for m in TEST_MOD.finditer(strip(open(path, encoding="utf-8").read()))]
    for t in tests:
        for mod in [m for m in files if m[:len(t)] == t]:
            files.pop(mod)
    modules = set(files)
    edges = defaultdict(set)
    for mod, path in files.items():
        text = without_test_modules(strip(open(path, encoding="utf-8").read()))
        for m in re.finditer(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", text):
            child = mod + (m.group(1),)
            if child in modules:
                edges[mod].add(child)
        for p in referenced_paths(text):
            target = resolve(p, mod, modules)
            if target is not None and target != mod:
                edges[mod].add(target)
    return files, modules, edges


def cycles(modules, edges):
    """A problem line for each import cycle among `modules`."""
    problems = []
    # Cycles: strongly connected components of more than one module (Tarjan).
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(comp)

    for v in sorted(modules):
        if v not in index:
            visit(v)
    for comp in sccs:
        names = sorted("::".join(c) or "crate" for c in comp)
        cyc = set(comp)
        inner = sorted(f"{'::'.join(a) or 'crate'} -> {'::'.join(b) or 'crate'}" for a in comp for b in edges.get(a, ()) if b in cyc)
        problems.append(f"import cycle among {len(comp)} modules: {', '.join(names)}\n    " + "\n    ".join(inner))

    return problems


def sublayer_rank(mod):
    """The rank of the folder of `mod` in its layer's SUBLAYERS (lowest 0), the folder, and
    whether the layer has folders at all; (None, None, False) outside such a layer."""
    if not mod or mod[0] not in SUBLAYERS:
        return None, None, False
    if len(mod) < 2:
        return None, None, True
    for rank, folders in enumerate(SUBLAYERS[mod[0]]):
        if mod[1] in folders:
            return rank, mod[1], True
    return None, mod[1], True


def sublayer_problems(modules, edges):
    """A problem line for each module of a layer with folders that stands in none of them, and
    for each import from a folder to one of its own rank or a higher one."""
    problems = []
    for mod in sorted(modules):
        rank, folder, layered = sublayer_rank(mod)
        if layered and folder is not None and rank is None:
            order = " < ".join(" | ".join(f) for f in SUBLAYERS[mod[0]])
            problems.append(f"{'::'.join(mod)}: not in a folder of {mod[0]}'s layers ({order})")
    for a, targets in sorted(edges.items()):
        ra, fa, _ = sublayer_rank(a)
        if ra is None:
            continue
        for b in sorted(targets):
            rb, fb, _ = sublayer_rank(b)
            if b[:1] != a[:1] or fb is None or fb == fa or rb is None:
                continue
            if rb >= ra:
                order = " < ".join(" | ".join(f) for f in SUBLAYERS[a[0]])
                problems.append(f"folder layer violation: {'::'.join(a)} ({fa}) uses {'::'.join(b)} ({fb}), which is not below it ({a[0]}: {order})")
    return problems


# Where raw driver calls may be made: the thin functions of driver/calls/, and nowhere else.
RAW_CALL_HOME = os.path.join("driver", "calls")
RAW_CALL_FIX = ("call it through a thin function of driver/calls/ (one per driver call, typed, its CUresult "
                "turned into Result<_, calls::Failed>, which `?` makes the crate's Error, as cudarc's result.rs "
                "does), adding one there if none fits")
# A driver API function: `cu` then a capital (cuLaunchKernel, cuMemcpyHtoDAsync_v2); the other
# libraries' are curand..., cublas..., cudaX..., nccl..., nvrtc..., which this leaves alone.
DRIVER_FN = r"cu[A-Z]\w*"


def raw_driver_calls(root=ROOT):
    """A problem line (file:line) for each raw driver call outside driver/calls/."""
    problems = []
    for d, _, names in sorted(os.walk(root)):
        for name in sorted(names):
            path = os.path.join(d, name)
            rel = os.path.relpath(path, root)
            if not name.endswith(".rs") or rel.startswith(RAW_CALL_HOME + os.sep):
                continue
            text = strip(open(path, encoding="utf-8").read())
            # The names the file gives cudarc's driver `sys` module: `sys`, and any `as` alias.
            aliases = {"sys"}
            for m in re.finditer(r"\buse\s+([^;]+);", text):
                if "cudarc" in m.group(1):
                    aliases.update(re.findall(r"\bsys\s+as\s+(\w+)", m.group(1)))
            found = []
            names_re = "|".join(sorted(aliases))
            # A driver function by name, or a macro's metavariable standing for one (`sys::$f(`).
            call = re.compile(r"(?<![\w$])(?:" + names_re + r")\s*::\s*(" + DRIVER_FN + r"|\$\w+)\s*(?:::\s*<[^;{}()]*>\s*)?\(")
            for m in call.finditer(text):
                found.append((m.start(), f"{m.group(1)}("))
            # cudarc's DriverError describes a code by calling the driver (cuGetErrorString,
            # cuGetErrorName).
            if re.search(r"\bDriverError\b", text):
                for m in re.finditer(r"\.\s*(error_string|error_name)\s*\(", text):
                    found.append((m.start(), f"DriverError::{m.group(1)}("))
            for m in re.finditer(r"\bcudarc\s*::\s*driver\s*::\s*result\b", text):
                found.append((m.start(), "cudarc::driver::result"))
            # Imports: driver functions by name (then called bare), and cudarc's result layer.
            for m in re.finditer(r"\buse\s+([^;]+);", text):
                for p in use_paths(m.group(1), []):
                    p = [s for s in p if s != "::"]
                    if p[:3] == ["cudarc", "driver", "sys"] and len(p) > 3 and re.fullmatch(DRIVER_FN, p[3]):
                        found.append((m.start(), f"use of {p[3]}"))
                    elif p[:3] == ["cudarc", "driver", "sys"] and re.search(r"\bsys\s*::\s*\*", m.group(1)):
                        found.append((m.start(), "glob use of cudarc::driver::sys"))
                    elif p[:3] == ["cudarc", "driver", "result"]:
                        found.append((m.start(), "use of cudarc::driver::result"))
            for offset, what in sorted(set(found)):
                line = text.count("\n", 0, offset) + 1
                problems.append(f"raw driver call outside driver/calls/: {os.path.join('gpu-runtime', 'src', rel)}:{line}: {what}: {RAW_CALL_FIX}")
    return problems


# Where locks live: every other module takes `crate::sync`'s, which carry a rank (sync/rank.rs).
LOCK_HOME = "sync"
# The model check's own stand-ins, built only under `--cfg loom` (the model's threads and its
# stand-in for a GPU stream), which are not the crate's locks.
LOCK_FREE_PASS = {os.path.join("driver", "ordering", "model.rs"), os.path.join("driver", "ordering", "lane.rs")}
LOCK_TYPES = {"Mutex", "MutexGuard", "RwLock", "RwLockReadGuard", "RwLockWriteGuard", "Condvar", "ReentrantMutex", "FairMutex"}
LOCK_FIX = "use crate::sync's Mutex/RwLock/Condvar/SpinLock, with a LockRank added to sync/rank.rs in the order of nesting"


def unranked_locks(root=ROOT):
    """A problem line (file:line) for each lock of std, parking_lot or loom outside sync/."""
    problems = []
    for d, _, names in sorted(os.walk(root)):
        for name in sorted(names):
            path = os.path.join(d, name)
            rel = os.path.relpath(path, root)
            if not name.endswith(".rs") or rel.split(os.sep)[0] == LOCK_HOME or rel in LOCK_FREE_PASS:
                continue
            text = without_test_modules(strip(open(path, encoding="utf-8").read()))
            found = []
            for m in re.finditer(r"\buse\s+([^;]+);", text):
                tree = re.sub(r"\s+", "", m.group(1))
                if re.match(r"(::)?(std|loom)::sync::", tree):
                    for kind in sorted(set(re.findall(r"\w+", m.group(1))) & LOCK_TYPES):
                        found.append((m.start(), f"use of {tree.split('::')[0]}::sync::{kind}"))
                elif re.match(r"(::)?parking_lot\b", tree):
                    found.append((m.start(), "use of parking_lot"))
            for m in re.finditer(r"\b(std|loom)\s*::\s*sync\s*::\s*(\w+)|\bparking_lot\s*::\s*(\w+)", text):
                kind = m.group(2) or m.group(3)
                if kind in LOCK_TYPES and not text[:m.start()].rstrip().endswith("use"):
                    found.append((m.start(), m.group(0).replace(" ", "")))
            for offset, what in sorted(set(found)):
                line = text.count("\n", 0, offset) + 1
                problems.append(f"lock without a rank: {os.path.join('gpu-runtime', 'src', rel)}:{line}: {what}: {LOCK_FIX}")
    return problems


# The other crates of the workspace: no layers, but no import cycle among their modules (their
# roots, lib.rs, hold the public entry points the modules serve, so edges to the root are left
# out).
OTHER_CRATES = ["gpu-cuda-source", "gpu-macros-core", "gpu-macros"]


def main():
    files, modules, edges = import_graph(ROOT)
    problems = []
    # Layers: no edge to a higher layer (the root may use everything).
    for a, targets in sorted(edges.items()):
        la = layer(a)
        if la is None:
            problems.append(f"{'::'.join(a)}: not in a layer (top-level modules are {', '.join(LAYERS[:-1])})")
            continue
        for b in sorted(targets):
            lb = layer(b)
            if lb is not None and lb > la and a != ():
                problems.append(f"layer violation: {'::'.join(a)} ({LAYERS[la]}) uses {'::'.join(b) or 'crate'} ({LAYERS[lb]})")
            elif lb is not None and lb != la and LAYERS[lb] in LEAVES and LAYERS[la] != "crate":
                problems.append(f"layer violation: {'::'.join(a)} ({LAYERS[la]}) uses {'::'.join(b)} of the optional layer {LAYERS[lb]}, which only the crate root may use")
    problems += sublayer_problems(modules, edges)
    problems += cycles(modules, edges)
    # One public path per item: the crate root re-exports named items only, never a layer whole.
    root_text = strip(open(os.path.join(ROOT, "lib.rs"), encoding="utf-8").read())
    for m in re.finditer(r"(?m)^\s*pub use [^;]*\*[^;]*;", root_text):
        problems.append(f"lib.rs re-exports a glob (`{' '.join(m.group(0).split())}`): every item has one public path, under its layer; re-export only the few items nearly every program names")
    problems += raw_driver_calls()
    problems += unranked_locks()
    for name in OTHER_CRATES:
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", name, "src")
        _, other_modules, other_edges = import_graph(root)
        other_modules.discard(())
        other_edges = {a: {b for b in t if b != ()} for a, t in other_edges.items() if a != ()}
        problems += [f"{name}: {p}" for p in cycles(other_modules, other_edges)]

    if "--tree" in sys.argv:
        print_tree(files)
    if "--graph" in sys.argv:
        print_graph(edges)
    n_edges = sum(len(t) for t in edges.values())
    if problems:
        print(f"check_layers: {len(problems)} problem(s) in {len(modules)} modules:")
        for p in problems:
            print("  " + p)
        sys.exit(1)
    print(f"check_layers: {len(modules)} modules, {n_edges} imports, no cycle, every import goes to its own layer or a lower one ({' < '.join(LAYERS)}), and inside {', '.join(SUBLAYERS)} to its own folder or a lower one ({'; '.join(' < '.join(' | '.join(f) for f in r) for r in SUBLAYERS.values())}); no cycle among the modules of {', '.join(OTHER_CRATES)}; no raw driver call outside {RAW_CALL_HOME}/; no lock outside {LOCK_HOME}/")


def print_graph(edges):
    counts = defaultdict(int)
    for a, targets in edges.items():
        for b in targets:
            ta, tb = (a[0] if a else "crate"), (b[0] if b else "crate")
            ta, tb = ("crate" if ta in ROOT_FILES else ta), ("crate" if tb in ROOT_FILES else tb)
            if ta != tb:
                counts[(ta, tb)] += 1
    print("imports between layers (module pairs):")
    for (a, b), n in sorted(counts.items(), key=lambda kv: (LAYERS.index(kv[0][0]) if kv[0][0] in LAYERS else 99, kv[0][1])):
        print(f"  {a:<9} -> {b:<9} {n}")
    for layer_name, ranks in SUBLAYERS.items():
        inner = defaultdict(int)
        for a, targets in edges.items():
            for b in targets:
                (_, fa, _), (_, fb, _) = sublayer_rank(a), sublayer_rank(b)
                if a[:1] == b[:1] == (layer_name,) and fa and fb and fa != fb:
                    inner[(fa, fb)] += 1
        order = [f for r in ranks for f in r]
        print(f"imports between the folders of {layer_name} (module pairs):")
        for (a, b), n in sorted(inner.items(), key=lambda kv: (-order.index(kv[0][0]) if kv[0][0] in order else 1, kv[0][1])):
            print(f"  {a:<9} -> {b:<9} {n}")


def print_tree(files):
    by_dir = defaultdict(list)
    for mod, path in files.items():
        lines = sum(1 for _ in open(path, encoding="utf-8"))
        by_dir[os.path.dirname(os.path.relpath(path, ROOT))].append((os.path.basename(path), lines))
    for d in sorted(by_dir):
        total = sum(n for _, n in by_dir[d])
        print(f"{d or 'src'}/  ({total} lines)")
        for name, n in sorted(by_dir[d]):
            print(f"    {name:<28} {n:>5}")


if __name__ == "__main__":
    main()
