"""Instructions per element of the kernel's compiled inner loops, from objdump.

A proxy for speed where no hardware can time the code (aarch64 here): the
hot loop of one block kernel (``block::Run<V, Full<V, F32, Silu>, false>`` and friends in
kernel/cpu/block.h) is disassembled, and the shortest cycle through a loop
head that calls nothing is taken as the loop's common path. That is the
path on which every "does any lane need the rare path" test says no, since
those paths call out-of-line functions or run longer inline code. The
longest such cycle is the loop that takes two vectors per iteration
(``Full::Vec2``); its instruction count over those 2 x lanes elements is the
result.

    python benchmarks/loop_instructions.py OBJECT [--objdump TOOL] [--dtype F32|F16|BF16]
        [--stores plain|streaming] [--kernel silu|swiglu] [--list]

``--kernel swiglu`` counts SwiGluGrad's loop (``block::RunSwiGlu``) instead,
whose common path is the one where every lane stays on its dtype's fast
path; it also takes two vectors per iteration.

OBJECT is one ISA's object file from a CMake build, e.g.
``<build>/CMakeFiles/jas_kernel.dir/kernel/cpu/isa_neon.cc.o`` (objdump:
``aarch64-linux-gnu-objdump``) or ``isa_avx512.cc.o`` (``objdump``).
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys

ISAS = {"Scalar": 1, "Avx2": 8, "Avx512": 16, "Neon": 4}  # lanes per vector
#: kernel/common/dtype.h's DataType values, as the demangler prints them.
DATA_TYPE = {"F32": 0, "F16": 1, "BF16": 27}
LINE = re.compile(r"^\s*([0-9a-f]+):\s+(.*)$")
TARGET = re.compile(r"\b([0-9a-f]+) <")
PREFIXES = {"notrack", "bnd", "rep", "repz", "repnz", "lock", "data16"}


def disassemble(objdump: str, obj: str, symbol_prefix: str) -> list[tuple[int, str, str]]:
    """(address, mnemonic, operands) of the function whose demangled name starts with symbol_prefix."""
    text = subprocess.run([objdump, "-d", "-C", "--no-show-raw-insn", obj], check=True, capture_output=True,
                          text=True).stdout
    insns: list[tuple[int, str, str]] = []
    inside = False
    for line in text.splitlines():
        if line.endswith(">:"):
            inside = line.split("<", 1)[1].startswith(symbol_prefix)
            continue
        m = LINE.match(line) if inside else None
        if m:
            words = m.group(2).split(None, 1)
            while len(words) > 1 and words[0] in PREFIXES:
                words = words[1].split(None, 1)
            insns.append((int(m.group(1), 16), words[0], words[1] if len(words) > 1 else ""))
    return insns


def kind(mnemonic: str) -> str:
    if mnemonic in ("call", "bl", "blr", "callq"):
        return "call"
    if mnemonic in ("ret", "retq", "br", "ud2", "brk") or mnemonic.startswith("hlt"):
        return "exit"
    if mnemonic in ("jmp", "b", "jmpq"):
        return "jump"
    if (mnemonic.startswith("j") and mnemonic != "jmp") or mnemonic.startswith("b.") or mnemonic in (
            "cbz", "cbnz", "tbz", "tbnz"):
        return "branch"
    return "plain"


def cycles(insns: list[tuple[int, str, str]]) -> list[tuple[int, list[int]]]:
    """For each backward-branch target, the shortest call-free cycle through it (head, instruction indices)."""
    index = {addr: i for i, (addr, _, _) in enumerate(insns)}
    succ: list[list[int]] = []
    for i, (_, mnem, ops) in enumerate(insns):
        k = kind(mnem)
        nxt = []
        if k in ("plain", "branch", "call") and i + 1 < len(insns):
            nxt.append(i + 1)
        if k in ("jump", "branch"):
            m = TARGET.search(ops)
            if m and int(m.group(1), 16) in index:
                nxt.append(index[int(m.group(1), 16)])
        succ.append(nxt)
    heads = sorted({t for i, s in enumerate(succ) for t in s if t <= i})
    found = []
    for head in heads:
        prev = {head: -1}
        queue = collections.deque([head])
        done = False
        while queue and not done:
            i = queue.popleft()
            for j in succ[i]:
                if j == head:
                    path = [i]
                    while path[-1] != head:
                        path.append(prev[path[-1]])
                    found.append((head, path[::-1]))
                    done = True
                    break
                if j not in prev and kind(insns[j][1]) != "call":
                    prev[j] = i
                    queue.append(j)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("object")
    parser.add_argument("--objdump", default="objdump")
    parser.add_argument("--dtype", choices=("F32", "F16", "BF16"), default="F32")
    parser.add_argument("--stores", choices=("plain", "streaming"), default="plain",
                        help="the ordinary loop, or its non-temporal-store twin (x86, outputs past the cache)")
    parser.add_argument("--kernel", choices=("silu", "swiglu"), default="silu",
                        help="SiluGrad's contiguous loop or SwiGluGrad's")
    parser.add_argument("--list", action="store_true", help="print the loop's instructions")
    args = parser.parse_args()
    isa = next((name for name in ISAS if f"isa_{name.lower()}" in args.object), None)
    if isa is None:
        parser.error(f"{args.object}: expected an isa_<scalar|avx2|avx512|neon>.cc.o object")
    elem = f"jas::block::Elem<(jas::DataType){DATA_TYPE[args.dtype]}>"
    streaming = "true" if args.stores == "streaming" else "false"
    if args.kernel == "swiglu":
        prefix = f"void jas::block::RunSwiGlu<jas::simd::{isa}, {elem} >("
    else:
        prefix = (f"void jas::block::Run<jas::simd::{isa}, jas::block::Full<jas::simd::{isa}, {elem}, "
                  f"jas::block::Silu>, {streaming}>(")
    insns = disassemble(args.objdump, args.object, prefix)
    if not insns:
        print(f"no function {prefix}...) in {args.object}", file=sys.stderr)
        return 1
    loops = cycles(insns)
    if not loops:
        print("no call-free loop found", file=sys.stderr)
        return 1
    head, path = max(loops, key=lambda t: len(t[1]))
    elements = 2 * ISAS[isa]
    if args.list:
        for i in path:
            print(f"  {insns[i][0]:6x}  {insns[i][1]:10s} {insns[i][2]}")
    print(f"{isa} {args.dtype} {args.kernel}: loop at +0x{insns[head][0]:x}, {len(path)} instructions for "
          f"{elements} elements = {len(path) / elements:.2f} per element")
    return 0


if __name__ == "__main__":
    sys.exit(main())
