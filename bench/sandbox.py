"""Sandbox start overhead: one-shot `run_rewards` (start bubblewrap + Python + import + call + teardown) vs one call
to a warm `RewardWorker`, median and p95 over N runs; optionally check that many launches leave fds, RSS and /tmp flat.

    python bench/sandbox.py [--runs 100] [--calls 1000] [--batch 64] [--launches 0]
"""
import argparse, os, statistics, sys, tempfile, time
from agentforge.sandbox import sandbox_mode
from agentforge.harness import ensure_safe
from agentforge.worker import RewardWorker, run_rewards

HONEST = '''
def exact(prompts, completions, answer, **kw):
    return [float(c.strip() == a) for c, a in zip(completions, answer)]
'''

def pct(xs, q):
    xs = sorted(xs); return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]

def show(name, xs):
    ms = [x * 1000 for x in xs]
    print(f'{name:<28} n={len(ms):<5} median {statistics.median(ms):8.2f} ms   p95 {pct(ms, 0.95):8.2f} ms   max {max(ms):8.2f} ms')

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--runs', type=int, default=100, help='one-shot runs')
    ap.add_argument('--calls', type=int, default=1000, help='calls to a warm worker')
    ap.add_argument('--batch', type=int, default=64, help='completions per batch')
    ap.add_argument('--launches', type=int, default=0, help='also check fds/RSS//tmp stay flat over this many launches (e.g. 1000)')
    a = ap.parse_args()
    mode = sandbox_mode()
    n = a.batch
    batch = dict(prompts=[f'{i}+1?' for i in range(n)], completions=[str(i + 1) for i in range(n)],
                 answer=[str(i + (i % 2)) for i in range(n)])
    with tempfile.TemporaryDirectory(prefix='af-bench-') as d:
        open(os.path.join(d, 'reward.py'), 'w').write(HONEST)
        if mode == 'bwrap':
            t0 = time.perf_counter(); ensure_safe(force=True); print(f'mode {mode}; canary run {1000 * (time.perf_counter() - t0):.1f} ms')
        else: print(f'mode {mode} (NOT ISOLATED)')
        run_rewards(d, 'exact', batch)
        one = []
        for _ in range(a.runs):
            t0 = time.perf_counter(); r = run_rewards(d, 'exact', batch)['exact']; one.append(time.perf_counter() - t0)
            assert r.ok, r
        show('one-shot run_rewards', one)
        with RewardWorker(d) as w:
            first = w.call('exact', batch)
            show('worker start (+import)', [first.start_seconds])
            calls = [w.call('exact', batch).seconds for _ in range(a.calls)]
        show(f'worker call (batch {n})', calls)
        print(f'start overhead per call: one-shot {statistics.median(one) * 1000:.1f} ms vs worker '
              f'{statistics.median(calls) * 1000:.2f} ms ({statistics.median(one) / statistics.median(calls):.0f}x)')
        if a.launches:
            fds = lambda: len(os.listdir('/proc/self/fd'))
            rss = lambda: int([l for l in open('/proc/self/status') if l.startswith('VmRSS')][0].split()[1])
            tmp = lambda: len([e for e in os.listdir('/tmp') if e.startswith('af-')])
            before = (fds(), rss(), tmp()); t0 = time.perf_counter()
            for i in range(a.launches): assert run_rewards(d, 'exact', batch)['exact'].ok
            after = (fds(), rss(), tmp())
            print(f'{a.launches} launches in {time.perf_counter() - t0:.1f} s: fds {before[0]} -> {after[0]}, '
                  f'RSS {before[1]} -> {after[1]} kB, af-* in /tmp {before[2]} -> {after[2]}')
            if after[0] != before[0] or after[2] != before[2] or after[1] - before[1] > 20_000: sys.exit('NOT FLAT')

if __name__ == '__main__': main()
