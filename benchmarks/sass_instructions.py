"""Instructions per element, registers, spills, occupancy and bytes in flight
of the CUDA kernels' loops, from their sm_90 SASS.

A plan for the GPU's bandwidth where no GPU runs the code: SiluGrad and
SwiGluGrad do little arithmetic per byte, so the instructions a thread issues
per element decide whether the kernel can be memory-bound at all, and the
registers decide how many threads, and so how many bytes of loads, an SM
holds in flight.

The kernels of kernel/cuda/silu_grad_cuda.cu (SiluGrad: grad.cuh's over its arithmetic) and
kernel/cuda/swiglu_grad_cuda.cu (SwiGluGrad) are compiled with nvcc (the
flags of cmake/cuda_backend.cmake) or read from built objects, disassembled
with cuobjdump (and the nvdisasm it calls), and each kernel's loop found in
the control-flow graph: the shortest cycle through a loop head that issues
as many 16-byte loads as the 16-byte stores it needs (SiluGrad: two per
store; SwiGluGrad: three per two stores, g, A and B in, dA and dB out),
calls nothing, and so takes every "does any lane need the rare path" test's
fast branch. Its instruction count over the elements its stores write is the
result ("fast"). "rare" is the cheapest such cycle through a call of a
rare-path function (one with a warp vote or double-precision arithmetic,
itself or in a function it calls: the general paths compute in double, the
float division's slow path does neither), each call costing its cheapest
path to its return: a warp with a lane off the fast path pays at least that.
Kernels that load element by element (--legacy) are counted on their
element-wide loads and stores instead.

Per kernel also: registers and stack bytes (cuobjdump -res-usage), local
memory loads and stores (spills) on the fast cycle and in the whole kernel,
the blocks of 256 threads an sm_90 SM holds by registers (65536 registers,
2048 threads, 32 blocks; registers allocated in units of 8 per thread), and
the bytes of loads a thread and an SM have in flight per pass
(kernel/cuda/grid.h's vectors per pass x operands x 16 bytes).

Model (issue-bound, no stalls): an H100 SXM and an H200 both have 132 SMs,
each with 4 schedulers issuing one warp instruction per clock at ~1.98 GHz,
i.e. 132 * 4 * 32 * 1.98e9 = 3.35e13 thread instructions per second; a
SiluGrad element moves 12 bytes (float32: two reads, one write) or 6 bytes
(halves), a SwiGluGrad element 20 or 10 (three reads, two writes), so I
instructions per element imply 3.35e13 * bytes / I bytes per second, against
HBM's 3.35 TB/s (H100 SXM) or 4.8 TB/s (H200).

    python benchmarks/sass_instructions.py [--object OBJ ...] [--nvcc NVCC] [--cuobjdump TOOL]
        [--nvdisasm TOOL] [--list PATH:DTYPE] [--json FILE] [--tools]

Fails (exit 1) when a kernel or its loop cannot be found, so the table cannot
go stale silently.
"""

from __future__ import annotations

import argparse
import collections
import heapq
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = [ROOT / "kernel" / "cuda" / "silu_grad_cuda.cu", ROOT / "kernel" / "cuda" / "swiglu_grad_cuda.cu"]
#: kernel/common/dtype.h's DataType values, as they appear in mangled names, and element bytes.
DTYPES = {"float32": ("E0", 4), "float16": ("E1", 2), "bfloat16": ("E27", 2)}
#: The kernels measured: path -> mangled-name pattern with {dt}; SiluGrad's (grad.cuh's with
#: its arithmetic, Silu) flat kernel's
#: non-aliased instantiation, its broadcast kernel for whole, aligned items (non-aliased);
#: SwiGluGrad's packed split off the first axis (FastDivmod rows) and its pair form (one
#: dense run).
KERNELS = {
    "flat": r"FlatKernelI\w*?4SiluELNS_8DataType{dt}ELb0E",
    "broadcast": r"BroadcastVectorKernelI\w*?4SiluELNS_8DataType{dt}ELb0E",
    "swiglu packed": r"SwiGluKernelILNS_8DataType{dt}ELNS_4cuda11SwiGluIndexE1E",
    "swiglu pair": r"SwiGluKernelILNS_8DataType{dt}ELNS_4cuda11SwiGluIndexE0E",
}
#: Bytes of loads each thread has in flight per pass (kernel/cuda/grid.h's constants,
#: read from the source below): vectors (or items of two vectors) per pass x operands x 16.
GRID_H = ROOT / "kernel" / "cuda" / "grid.h"
IN_FLIGHT = {"flat": ("kFlatVectorsPerPass", 2 * 16), "broadcast": ("kBroadcastItemsPerPass", 2 * 32),
             "swiglu packed": ("kSwiGluVectorsPerPass", 3 * 16), "swiglu pair": ("kSwiGluVectorsPerPass", 3 * 16)}
#: issue 47's goals: fast-path instructions per element (float32, halves).
GOALS = {"flat": (60, 40), "broadcast": (60, 40), "swiglu packed": (100, 55), "swiglu pair": (100, 55)}
#: Loads and stores per element of each path (SiluGrad's: g and x in, one out).
ACCESSES = {"swiglu packed": (3, 2), "swiglu pair": (3, 2)}
#: The kernel of the earlier layout (one FlatKernel<T, kVector>, a StridedKernel), for comparisons.
LEGACY = {
    "flat": r"FlatKernelINS0_10DeviceElemILNS_8DataType{dt}EEELb1E",
    "broadcast": r"StridedKernelINS0_10DeviceElemILNS_8DataType{dt}EEEE",
}
H200 = {"sms": 132, "schedulers": 4, "clock": 1.98e9, "hbm": 4.8e12}
#: sm_90's limits per multiprocessor (H100 and H200 alike), and the H100 SXM's HBM3.
SM90 = {"regs": 65536, "threads": 2048, "blocks": 32, "reg_unit": 8}
H100_HBM = 3.35e12
THREADS = 256  # kernel/cuda/grid.h's kThreads

#: What marks a called function as a rare path (the division's slow path has none of them).
RARE_OPCODES = ("VOTE", "DFMA", "DMUL", "DADD")
LINE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
FUNCTION = re.compile(r"Function : (\S+)")
TARGET = re.compile(r"0x([0-9a-f]+)")


def find_tool(name: str, given: str | None) -> str:
    """The tool given, on PATH, or from its nvidia-cuda-<name> wheel; exits 1 naming what to install."""
    if given:
        return given
    found = shutil.which(name)
    if found:
        return found
    try:
        import nvidia  # type: ignore[import-not-found]

        for base in nvidia.__path__:
            for candidate in pathlib.Path(base).glob(f"*/bin/{name}"):
                return str(candidate)
    except ImportError:
        pass
    sys.exit(f"{name} not found: put it on PATH, pass --{name}, or pip install nvidia-cuda-{name}")


def compile_objects(nvcc: str, out: pathlib.Path) -> list[pathlib.Path]:
    objs = []
    for source in SOURCES:
        obj = out / (source.stem + ".cubin")
        subprocess.run([nvcc, "-std=c++20", "-O3", "--fmad=false", "-arch=sm_90", "-cubin", "-I",
                        str(ROOT / "kernel"), "-o", str(obj), str(source)], check=True)
        objs.append(obj)
    return objs


def functions(cuobjdump: str, nvdisasm: str, obj: pathlib.Path) -> dict[str, list[tuple[int, str]]]:
    """Mangled kernel name -> [(address, instruction text)] of its sm_90 SASS."""
    # cuobjdump disassembles through nvdisasm, found on PATH or by NVDISASM_PATH.
    env = dict(os.environ, NVDISASM_PATH=str(pathlib.Path(nvdisasm).parent))
    done = subprocess.run([cuobjdump, "-sass", "-arch", "sm_90", str(obj)], capture_output=True, text=True, env=env)
    if done.returncode:
        sys.exit(f"{cuobjdump} -sass failed on {obj}:\n{done.stderr.strip()}")
    text = done.stdout
    out: dict[str, list[tuple[int, str]]] = {}
    current = None
    for line in text.splitlines():
        m = FUNCTION.search(line)
        if m:
            current = out.setdefault(m.group(1), [])
            continue
        m = LINE.match(line)
        if m and current is not None:
            current.append((int(m.group(1), 16), m.group(2)))
    return out


RES = re.compile(r"Function (\S+):.*?REG:(\d+).*?STACK:(\d+)")


def resources(cuobjdump: str, obj: pathlib.Path) -> dict[str, tuple[int, int]]:
    """Mangled kernel name -> (registers, stack bytes), from cuobjdump -res-usage."""
    done = subprocess.run([cuobjdump, "-res-usage", str(obj)], capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{cuobjdump} -res-usage failed on {obj}:\n{done.stderr.strip()}")
    out = {}
    lines = done.stdout.splitlines()
    for first, second in zip(lines, lines[1:]):
        m = RES.search(first + " " + second)
        if m and first.lstrip().startswith("Function"):
            out[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return out


def occupancy(regs: int) -> int:
    """Blocks of THREADS one sm_90 multiprocessor holds at once with `regs` registers a thread."""
    per_thread = -(-regs // SM90["reg_unit"]) * SM90["reg_unit"]
    return min(SM90["regs"] // (per_thread * THREADS), SM90["threads"] // THREADS, SM90["blocks"])


def grid_constant(name: str) -> int:
    m = re.search(rf"constexpr int {name} = (\d+);", GRID_H.read_text())
    if not m:
        sys.exit(f"{name} not found in {GRID_H}")
    return int(m.group(1))


def opcode(insn: str) -> str:
    words = insn.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ""


def graph(insns: list[tuple[int, str]]) -> list[list[int]]:
    index = {addr: i for i, (addr, _) in enumerate(insns)}
    succ: list[list[int]] = []
    for i, (_, text) in enumerate(insns):
        op = opcode(text)
        guarded = text.startswith("@")
        nxt = []
        base = op.split(".")[0]
        if base in ("EXIT", "RET", "BRA", "BRX", "JMP") and not guarded and not op.startswith("BRA.DIV"):
            pass
        elif i + 1 < len(insns):
            nxt.append(i + 1)
        if base in ("BRA", "JMP"):
            m = TARGET.search(text.split(None, 2)[-1] if not guarded else text.split(None, 3)[-1])
            if m and int(m.group(1), 16) in index:
                nxt.append(index[int(m.group(1), 16)])
        succ.append(nxt)
    return succ


WIDTH = {".128": 16, ".64": 8, ".U16": 2, ".S16": 2, ".U8": 1, ".S8": 1}


def width(op: str) -> int:
    return next((b for suffix, b in WIDTH.items() if suffix + "." in op + "."), 4)


def is_load(text: str, nbytes: int) -> bool:
    op = opcode(text)
    return op.startswith("LDG") and width(op) == nbytes


def is_store(text: str, nbytes: int) -> bool:
    op = opcode(text)
    return op.startswith("STG") and width(op) == nbytes


def shortest_cycle(insns, succ, head, nbytes, must=None, accesses=(2, 1)):
    """Shortest cycle through head with whole elements' stores (at least one element) and their loads
    (nbytes wide; `accesses` loads and stores per element), calling nothing but `must` (then passing
    through it): (length, elements, path) or None."""
    per_ld, per_st = accesses
    cap_l, cap_s = 4 * per_ld, 4 * per_st
    start = (head, 0, 0, must is None)
    prev = {start: None}
    queue = collections.deque([start])
    best = None
    while queue:
        node = queue.popleft()
        i, ld, st, seen = node
        for j in succ[i]:
            text = insns[j][1]
            if opcode(text).startswith("CALL") and j != must:
                continue
            state = (j, ld + is_load(text, nbytes), st + is_store(text, nbytes), seen or j == must)
            if state[1] > cap_l or state[2] > cap_s:
                continue
            if j == head:
                whole = state[2] >= per_st and state[2] % per_st == 0
                if state[3] and whole and state[1] * per_st >= per_ld * state[2]:
                    path = [node]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    path = [p[0] for p in reversed(path)]
                    elements = state[2] // per_st
                    if best is None or len(path) / elements < best[0] / best[1]:
                        best = (len(path), elements, path)
                continue
            if state not in prev:
                prev[state] = node
                queue.append(state)
    return best


def call_target(insns, index, i) -> int | None:
    m = TARGET.search(insns[i][1].split("CALL", 1)[1])
    return index.get(int(m.group(1), 16)) if m else None


def callee(insns, succ, index, start, active=frozenset()) -> tuple[int | None, bool]:
    """The cheapest path from start to a RET (the calls on it costing their own cheapest paths), and
    whether the function or one it calls is a rare path: a warp vote or double-precision arithmetic."""
    active = active | {start}
    dist = {start: 1}
    queue = [(1, start)]
    shortest = None
    voting = False
    while queue:
        d, i = heapq.heappop(queue)
        if d > dist.get(i, d):
            continue
        op = opcode(insns[i][1])
        voting = voting or op.startswith(RARE_OPCODES)
        if op.startswith("RET"):
            shortest = d if shortest is None else min(shortest, d)
            continue
        for j in succ[i]:
            cost = 1
            if opcode(insns[j][1]).startswith("CALL"):
                target = call_target(insns, index, j)
                if target is None or target in active:
                    continue
                inner, inner_voting = callee(insns, succ, index, target, active)
                voting = voting or inner_voting
                if inner is None:
                    continue
                cost += inner
            if d + cost < dist.get(j, float("inf")):
                dist[j] = d + cost
                heapq.heappush(queue, (d + cost, j))
    return shortest, voting


def measure(insns: list[tuple[int, str]], elem_bytes: int, accesses=(2, 1)):
    """(fast, rare or None) instructions per element, and the fast cycle; None if no loop is found."""
    succ = graph(insns)
    heads = sorted({t for i, s in enumerate(succ) for t in s if t <= i})
    fast = None
    for nbytes in (16, elem_bytes):  # vector accesses, else element by element
        for head in heads:
            c = shortest_cycle(insns, succ, head, nbytes, accesses=accesses)
            if c and (fast is None or c[0] / c[1] < fast[0] / fast[1]):
                fast = c
        if fast is not None:
            break
    if fast is None:
        return None
    vec = nbytes // elem_bytes
    index = {addr: i for i, (addr, _) in enumerate(insns)}
    rare = None
    for i, (_, text) in enumerate(insns):
        if not opcode(text).startswith("CALL"):
            continue
        entry = call_target(insns, index, i)
        if entry is None:
            continue
        body, voting = callee(insns, succ, index, entry)
        if not voting or body is None:  # the division's slow path, not a rare path
            continue
        cyc = shortest_cycle(insns, succ, fast[2][0], nbytes, must=i, accesses=accesses)
        if cyc:
            cost = (cyc[0] + body) / (cyc[1] * vec)
            rare = cost if rare is None else min(rare, cost)
    return fast[0] / (fast[1] * vec), rare, fast


def implied(per_element: float, elem_bytes: int, accesses=(2, 1)) -> float:
    rate = H200["sms"] * H200["schedulers"] * 32 * H200["clock"]
    return min(H200["hbm"], rate / per_element * sum(accesses) * elem_bytes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--object", type=pathlib.Path, nargs="+",
                        help="built objects or cubins (default: compile the sources)")
    parser.add_argument("--nvcc", default=shutil.which("nvcc") or "nvcc")
    parser.add_argument("--cuobjdump")
    parser.add_argument("--nvdisasm")
    parser.add_argument("--tools", action="store_true", help="print the disassembly tools found and stop")
    parser.add_argument("--legacy", action="store_true", help="the earlier kernels' names (for a before/after)")
    parser.add_argument("--list", metavar="PATH:DTYPE", help="print one loop's instructions, e.g. flat:float32")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()
    cuobjdump = find_tool("cuobjdump", args.cuobjdump)
    nvdisasm = find_tool("nvdisasm", args.nvdisasm)
    if args.tools:
        print(f"cuobjdump: {cuobjdump}\nnvdisasm: {nvdisasm}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        funcs = {}
        res = {}
        for obj in args.object or compile_objects(args.nvcc, pathlib.Path(tmp)):
            funcs.update(functions(cuobjdump, nvdisasm, obj))
            res.update(resources(cuobjdump, obj))
    names = LEGACY if args.legacy else KERNELS
    failed = False
    rows = []
    for path, pattern in names.items():
        for dtype, (code, elem_bytes) in DTYPES.items():
            rx = re.compile(pattern.format(dt=code))
            matches = [n for n in funcs if rx.search(n)]
            if len(matches) != 1:
                print(f"{path} {dtype}: expected one kernel matching {rx.pattern}, found {len(matches)}",
                      file=sys.stderr)
                failed = True
                continue
            accesses = ACCESSES.get(path, (2, 1))
            result = measure(funcs[matches[0]], elem_bytes, accesses)
            if result is None:
                print(f"{path} {dtype}: no loop with whole elements' loads and stores found in {matches[0]}",
                      file=sys.stderr)
                failed = True
                continue
            fast, rare, cycle = result
            insns = funcs[matches[0]]
            if args.list == f"{path}:{dtype}":
                for i in cycle[2]:
                    print(f"  {insns[i][0]:6x}  {insns[i][1]}")
            regs, stack = res.get(matches[0], (0, 0))
            blocks = occupancy(regs) if regs else 0
            name, per_pass = IN_FLIGHT[path]
            loads = grid_constant(name) * per_pass
            local_fast = sum(opcode(insns[i][1]).startswith(("LDL", "STL")) for i in cycle[2])
            local_all = sum(opcode(text).startswith(("LDL", "STL")) for _, text in insns)
            goal = GOALS[path][0 if elem_bytes == 4 else 1]
            rows.append({"path": path, "dtype": dtype, "fast": round(fast, 1),
                         "rare": None if rare is None else round(rare, 1), "goal": goal,
                         "implied_tbps": round(implied(fast, elem_bytes, accesses) / 1e12, 2),
                         "registers": regs, "stack_bytes": stack, "local_on_fast_path": local_fast,
                         "local_in_kernel": local_all, "blocks_per_sm": blocks,
                         "threads_per_sm": blocks * THREADS, "load_bytes_per_thread": loads,
                         "load_kib_in_flight_per_sm": blocks * THREADS * loads / 1024})
    if rows:
        print("| path | dtype | SASS per element, fast (goal) | implied issue-bound bandwidth | "
              "SASS per element, rare | registers | stack B | local ld/st on fast path (kernel) | "
              "blocks of 256 per SM | loads in flight per thread | per SM |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            rare_s = f"{r['rare']:.1f}" if r["rare"] is not None else "-"
            bw = r["implied_tbps"]
            print(f"| {r['path']} | {r['dtype']} | {r['fast']:.1f} ({r['goal']}) | {bw:.2f} TB/s "
                  f"({bw / 4.8:.0%} of H200's 4.8, {min(bw / 3.35, 1):.0%} of H100's 3.35) | {rare_s} | "
                  f"{r['registers']} | {r['stack_bytes']} | {r['local_on_fast_path']} ({r['local_in_kernel']}) | "
                  f"{r['blocks_per_sm']} | {r['load_bytes_per_thread']} B | {r['load_kib_in_flight_per_sm']:.0f} KiB |")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
