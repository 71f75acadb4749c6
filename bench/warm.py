"""Benchmark warm inner workers (`agentforge.warm`): the fixed cost of an inner job, cold against warm, side by side.

Run: .venv/bin/python bench/warm.py [--brief unit_conversion] [--jobs 3] [--rounds 2] [--slots 1]

One spec (lesson 12b's heuristic: 48 steps at 3e-4, 256 rows), `--jobs` distinct inner jobs per batch (training seeds
differ, so each really trains), queued on a fresh pool and run by one worker with one slot until idle:
- cold: every attempt a fresh interpreter (`python -c run_child`), every hidden scoring another (`python -I`);
- warm: attempts and scorings forked from one process that imported torch, transformers and TRL once.
With `--slots 2` (as a run's pool, each attempt given OMP_NUM_THREADS = cores / slots) compare the training
seconds too: that is how a warm process that imported torch with every core was caught
(retros/2026-12-01-warm-jobs-ran-every-core.md). Overhead per job = (worker wall - training seconds / slots) / jobs: process starts, imports, loading the
student, the hidden scoring (512 greedy items) and the pool's bookkeeping. The warm worker's own start is shown
separately (paid once per worker). Batches alternate cold and warm so both see the same machine load. The untrained
student's hidden score is computed once before timing (it is cached by every mode alike).
Prints figures; asserts nothing (these machines are shared and noisy: targets live here, not in unit tests).
"""
import argparse, os, statistics, tempfile, time
from pathlib import Path
from agentforge.agents import HEURISTIC, write_spec
from agentforge.inner import inner_outcome, submit_inner
from agentforge.scoring import pre_score
from agentforge.pool import Pool
from agentforge.runner import work
from agentforge.warm import INNER

def batch(spec:Path, seeds:list, warm:bool, cache:Path, slots:int=1) -> dict:
    threads = str(max(1, (os.cpu_count() or 1) // slots))  # as a run's pool does (episode._pool): one share of the cores
    pool = Pool(tempfile.mkdtemp(prefix='bench-warm-'), capacity={'inner': slots}, env=dict(OMP_NUM_THREADS=threads))
    jobs = [submit_inner(pool, spec, seed=s, cache_root=cache) for s in seeds]
    t = time.monotonic()
    stats = work(pool, 'inner', slots=slots, until_idle=True, warm=INNER if warm else None)
    wall = time.monotonic() - t
    outs = [inner_outcome(pool, j, cache) for j in jobs]
    assert all(o['state'] == 'done' for o in outs), (stats, [o['error'] for o in outs])
    train = sum(o['result']['train_seconds'] for o in outs)
    return dict(wall=wall, train=train, per_job=(wall - train / slots) / len(seeds))

def main(brief:str, jobs:int, rounds:int, slots:int=1, first_seed:int=100):
    root = Path(tempfile.mkdtemp(prefix='bench-warm-spec-')); (root / 'spec').mkdir()
    (root / 'spec' / 'task.yaml').write_text(write_spec(brief, HEURISTIC))
    cache = root / 'cache'
    pre_score('tiny-student', brief)  # the pre score is cached for both modes
    from agentforge.warm import Warm
    t = time.monotonic(); w = Warm(INNER); start = time.monotonic() - t; w.close()
    res, seed = {'cold': [], 'warm': []}, first_seed
    for r in range(rounds):
        for mode in (('cold', 'warm') if r % 2 == 0 else ('warm', 'cold')):
            b = batch(root / 'spec', list(range(seed, seed + jobs)), mode == 'warm', cache, slots); seed += jobs
            res[mode].append(b)
            print(f"round {r + 1} {mode}: {jobs} jobs in {b['wall']:.1f} s, training {b['train']:.1f} s, "
                  f"overhead {b['per_job']:.2f} s per job", flush=True)
    for mode, bs in res.items():
        med = statistics.median(b['per_job'] for b in bs)
        print(f"{mode}: overhead per job, median of {len(bs)} batches: {med:.2f} s"
              + (f" ({med - start / jobs:.2f} s without the worker's start)" if mode == 'warm' else ''))
    print(f"warm worker start (once per worker, included in the warm batches' wall): {start:.2f} s")

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--brief', default='unit_conversion')
    ap.add_argument('--jobs', type=int, default=3)
    ap.add_argument('--rounds', type=int, default=2)
    ap.add_argument('--slots', type=int, default=1, help='attempts at once, each with cores/slots torch threads (a run uses 2)')
    ap.add_argument('--first-seed', type=int, default=100, help='training seed of the first job (results are cached by seed)')
    a = ap.parse_args()
    main(a.brief, a.jobs, a.rounds, a.slots, a.first_seed)
