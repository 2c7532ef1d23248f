#!/usr/bin/env python3
# doc_examples.py: turns every `no_run` rustdoc example of gpu-runtime into an ignored test in
# tests/tests/zz_doc_examples.rs (git-ignored; the gpu-suite package's only test found by cargo's
# auto-discovery, in tests/tests/), so that a GPU machine can run them:
#   python3 scripts/doc_examples.py && ../shared/gpu/pack
#   then on the GPU machine: .gpu/tests/zz_doc_examples-* --ignored --test-threads=1
# Examples that need a second GPU or a second process are left out. CI compiles the examples
# as doctests but cannot run them.
import re, sys, pathlib
here = pathlib.Path(__file__).resolve().parent.parent
root = here / 'gpu-runtime' / 'src'
out = []
n = 0
skipped = []
for f in sorted(root.glob('*.rs')):
    lines = f.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r'\s*(///|//!) ```no_run\s*$', lines[i])
        if not m:
            i += 1; continue
        start = i
        i += 1
        body = []
        while not re.match(r'\s*(///|//!) ```\s*$', lines[i]):
            t = re.sub(r'^\s*(///|//!) ?', '', lines[i])
            if t.startswith('# '): t = t[2:]
            elif t == '#': t = ''
            body.append(t)
            i += 1
        i += 1
        code = '\n'.join(body)
        name = f"{f.stem}_{start+1}"
        if 'Device::new(1)' in code or 'fn export' in code:
            skipped.append(name); continue
        n += 1
        if 'fn main()' in code:
            mod = code
        else:
            stripped = code.rstrip()
            if stripped.endswith('Ok::<(), gpu_runtime::Error>(())'):
                mod = 'pub fn main() -> gpu_runtime::Result<()> {\n' + code + '\n}'
            else:
                mod = 'pub fn main() -> gpu_runtime::Result<()> {\n' + code + '\nOk(())\n}'
        out.append(f"#[allow(unused, clippy::all)]\nmod {name} {{\n{mod}\n#[test]\n#[ignore = \"needs a CUDA GPU\"]\nfn run() {{ main().unwrap() }}\n}}\n")
(here / 'tests' / 'tests').mkdir(exist_ok=True)
(here / 'tests' / 'tests' / 'zz_doc_examples.rs').write_text('//! Generated: every no_run rustdoc example, run on the GPU.\n' + '\n'.join(out))
print(n, 'examples;', 'skipped:', skipped)
