"""What the comparison scripts of bench/ share: where the peers are, running a
command for its output, the peers' JSON lines, and timing an executable with
vm_run --benchmark."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.path.join(os.path.dirname(ROOT), "shared", "peers")
BIN = os.path.join(ROOT, "build", "bin")
sys.path.insert(0, PEERS)  # the peers' own modules (bert_model, common)


def run(cmd):
    """Runs cmd, returning its stdout; its stderr passes through."""
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout


def json_records(text):
    """The JSON lines of a peer script's output."""
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def compile_model(onnx_path, exe):
    run([os.path.join(BIN, "vm_compile"), onnx_path, "-o", exe])


def check(exe, inputs, expected, atol=1e-4):
    """vm_run exe on `inputs` (name -> .npy) against `expected` (.npy paths, in order)."""
    run([os.path.join(BIN, "vm_run"), exe, "--trust-native", *[f"--input={n}=@{p}" for n, p in inputs.items()],
         *[f"--expected_output=@{p}" for p in expected], f"--atol={atol}", "--rtol=0"])


def _own_ticks():
    """CPU ticks of this process and of its children waited for (vm_run)."""
    with open("/proc/self/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15])  # utime stime cutime cstime


def time_dynvm(exe, inputs, threads, target_s, noisy=0.10, attempts=2):
    """Median ms of vm_run --benchmark on `inputs` (name -> .npy), with as many runs as
    fill about target_s seconds, measured as the peers' common.timeit measures them:
    after waiting for a quiet machine, and again (keeping the quieter attempt) if other
    processes or the hypervisor took `noisy` of it or more meanwhile."""
    from common import cpu_sample, wait_quiet  # the peers' own

    # The executables are compiled here, so their native code is ours to trust.
    vm_run = [os.path.join(BIN, "vm_run"), exe, "--trust-native", *[f"--input={n}=@{p}" for n, p in inputs.items()],
              f"--threads={threads}"]

    def median(runs):
        out = run(vm_run + [f"--benchmark={runs}"])
        line = next(l for l in out.splitlines() if l.startswith("latency_ms"))
        return float(dict(kv.split("=") for kv in line.split()[1:])["median"])

    runs = max(10, int(target_s * 1000 / max(median(3), 1e-3)))
    best = None
    for _ in range(attempts):
        wait_quiet(noisy)
        a, a_own = cpu_sample(), _own_ticks()
        ms = median(runs)
        b, b_own = cpu_sample(), _own_ticks()
        capacity = (b[0] - a[0]) * os.sysconf("SC_CLK_TCK") * os.cpu_count()
        foreign = (max(0, (b[1] - a[1]) - (b_own - a_own)) + (b[2] - a[2])) / capacity
        if best is None or foreign < best[1]:
            best = (ms, foreign)
        if foreign < noisy:
            break
    if best[1] >= noisy:
        print(f"# {os.path.basename(exe)}: noisy measurement, other load {best[1]:.0%} of the "
              "machine", file=sys.stderr)
    return best[0]
