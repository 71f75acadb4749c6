"""Benchmark the validation probe: `validate` on honest specs (median, p95, per-gate breakdown) and a sandbox start.

Run: .venv/bin/python bench/probe.py [--runs N]
Prints figures; asserts nothing (these machines are shared and noisy: targets live here, not in unit tests).
"""
import argparse, statistics, tempfile, time
from collections import defaultdict
from pathlib import Path
from agentforge.families import FAMILIES
from agentforge.probe import validate, _student
from agentforge.worker import run_rewards
from agentforge.rows import example_spec

def inner_seconds(spec_dir, hidden) -> float:
    "Wall seconds of the whole inner job the probe guards: `inner.run_inner` (pre and post hidden scoring included, cache off)."
    from agentforge.inner import run_inner
    return run_inner(spec_dir, cache=False, hidden_root=hidden, cache_root=Path(tempfile.mkdtemp())).seconds

def main(runs:int, inner:bool):
    root = Path(tempfile.mkdtemp()); hidden = root / 'platform'
    specs = {f: example_spec(f, root / f, hidden_root=hidden) for f in sorted(FAMILIES)}
    custom = example_spec('arithmetic', root / 'custom', hidden_root=hidden)
    (custom / 'reward.py').write_text("def exact(prompts, completions, answer, **kw):\n"
                                      "    return [float(c.strip() == a) for c, a in zip(completions, answer)]\n")
    (custom / 'task.yaml').write_text((custom / 'task.yaml').read_text().replace('use: numeric_match', 'use: reward.py:exact'))
    specs['arithmetic+reward.py'] = custom
    t = time.monotonic(); _student('tiny-student'); print(f"student load (once per process): {time.monotonic() - t:.2f} s")
    for name, d in specs.items(): validate(d, hidden_root=hidden)                       # warm: hidden splits, caches
    print(f"\nvalidate() on honest specs, {runs} runs each (seconds)")
    print(f"{'spec':24s} {'median':>7s} {'p95':>7s}   per-gate medians")
    for name, d in specs.items():
        secs, gates = [], defaultdict(list)
        for _ in range(runs):
            rep = validate(d, hidden_root=hidden)
            assert rep.validated, rep.failure()
            secs.append(rep.seconds)
            for c in rep.checks: gates[c.id].append(c.seconds)
        p95 = sorted(secs)[max(0, round(0.95 * len(secs)) - 1)]
        per = ' '.join(f"{g}={statistics.median(v):.3f}" for g, v in gates.items() if statistics.median(v) >= 0.001)
        print(f"{name:24s} {statistics.median(secs):7.3f} {p95:7.3f}   {per}")
    batch = dict(prompts=['q'] * 64, completions=['a'] * 64, answer=['a'] * 64)
    one = []
    for _ in range(runs * 3):
        t = time.monotonic(); res = run_rewards(custom, 'exact', batch); one.append(time.monotonic() - t); assert res['exact'].ok
    print(f"\nsandbox one-shot run_rewards (start + import + call + teardown): median {statistics.median(one) * 1000:.1f} ms")
    if inner:
        print("\nprobe cost vs one inner job (inner.run_inner on CPU: training plus hidden pre/post scoring)")
        for name in sorted(FAMILIES):
            probe_s = statistics.median([validate(specs[name], hidden_root=hidden).seconds for _ in range(runs)])
            train_s = inner_seconds(specs[name], hidden)
            print(f"  {name:18s} probe {probe_s:5.2f} s   inner job {train_s:6.1f} s   ratio {probe_s / train_s:6.1%}")

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--runs', type=int, default=7, help='validate() runs per spec')
    ap.add_argument('--inner', action='store_true', help='also time the whole inner job of each spec (probe cost ratio)')
    a = ap.parse_args(); main(a.runs, a.inner)
