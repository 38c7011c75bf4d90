"""Session 12: which of this machine's CPUs slow each other down? The VM says one thread per core (lscpu), but
over C++ runs show some worker processes twice as fast as the rest in every case they time, as if some cores
shared a physical core with a busy neighbour and others did not. For every pair (i, j) of CPUs: a Python loop
on i, timed alone and while a spinning process holds j. Writes smt.json (the slowdown matrix, the pairs that
slow each other, a set of CPUs no two of which do) and prints a table.
Usage: python smt_probe.py OUT_DIR"""
import json
import os
import subprocess
import sys
import time

N = 300_000


def loop_ns(cpu, repeat=7):
    os.sched_setaffinity(0, {cpu})
    best = None
    for _ in range(repeat):
        t = time.perf_counter_ns()
        for _ in range(N):
            pass
        t = time.perf_counter_ns() - t
        best = t if best is None else min(best, t)
    return best / N


def main(out):
    cpus = sorted(os.sched_getaffinity(0))
    alone = {i: loop_ns(i) for i in cpus}
    slow = {}
    for j in cpus:
        spinner = subprocess.Popen([sys.executable, "-c", f"import os; os.sched_setaffinity(0, {{{j}}})\nwhile True: pass"])
        time.sleep(0.05)
        for i in cpus:
            if i != j:
                slow[i, j] = loop_ns(i)
        spinner.kill()
        spinner.wait()
    again = {i: loop_ns(i) for i in cpus}
    slow = {(i, j): t / min(alone[i], again[i]) for (i, j), t in slow.items()}
    pairs = sorted({tuple(sorted(p)) for p, s in slow.items() if s > 1.3})
    chosen = []
    for i in cpus:
        if all(tuple(sorted((i, c))) not in pairs for c in chosen):
            chosen.append(i)
    print("alone (ns per loop turn):", " ".join(f"{i}:{alone[i]:.1f}/{again[i]:.1f}" for i in cpus))
    print("     " + " ".join(f"{j:>5}" for j in cpus))
    for i in cpus:
        print(f"{i:>4} " + " ".join("    -" if i == j else f"{slow[i, j]:5.2f}" for j in cpus))
    print("pairs slowing each other by more than 30%:", pairs)
    print("one CPU per such group:", ",".join(map(str, chosen)))
    with open(os.path.join(out, "smt.json"), "w") as f:
        json.dump({"cpus": cpus, "alone_ns": alone, "again_ns": again, "pairs": pairs, "chosen": chosen,
                   "slowdown": {f"{i},{j}": s for (i, j), s in slow.items()}}, f, indent=1)
    with open(os.path.join(out, "smt_cores.txt"), "w") as f:
        f.write(",".join(map(str, chosen)))


if __name__ == "__main__":
    main(sys.argv[1])
