"""Benchmark warm inner workers (`agentforge.warm`): the fixed cost of an inner job, cold against warm, side by side.

Run: .venv/bin/python bench/warm.py [--brief unit_conversion] [--jobs 3] [--rounds 2] [--slots 1] [--out FILE.json]
     .venv/bin/python bench/warm.py --calls 4 [--out FILE.json]   # one warm process per run, not per step

One spec (lesson 12b's heuristic: 48 steps at 3e-4, 256 rows), `--jobs` distinct inner jobs per batch (training seeds
differ, so each really trains), queued on a fresh pool and run by one worker with `--slots` slots until idle:
- cold: every attempt a fresh interpreter (`python -c run_child`), every hidden scoring another (`python -I`);
- warm: attempts and scorings forked from one process that imported torch, transformers and TRL once.
With `--slots 2` (as a run's pool, each attempt given OMP_NUM_THREADS = cores / slots) compare the training
seconds too: that is how a warm process that imported torch with every core was caught
(retros/2026-12-01-warm-jobs-ran-every-core.md).

What it reports, per mode (batches alternate cold and warm so both see the same machine load):
- overhead per job = attempt wall (the queue's started → finished) − training seconds (`trainer.train()`), the
  median over every job but each batch's first: process start, imports, loading the student, building the trainer,
  saving the model, the hidden scoring and the attempt's bookkeeping;
- of it, the hidden scoring (`score_seconds`: every hidden item, greedy, its process included);
- the worker's own start and stop, paid once per worker: the first job's extra overhead, and the time from the last
  job's end to the worker's return (the warm process's start and stop are in them).
With `--calls N` it measures instead what an outer run pays per step: N successive `work` calls (as
`episode.train_and_grade` makes one a step), each serving one new short job (the same spec at 4 steps), with
`keep_warm=False` (a warm process started and stopped per call) and `keep_warm=True` (one kept across the calls).
The untrained student's hidden score is computed once before timing (it is cached by every mode alike).
Prints figures and writes them to --out; asserts nothing (these machines are shared and noisy: targets live here,
not in unit tests).
"""
import argparse, json, os, statistics, tempfile, time
from pathlib import Path
from agentforge.agents import HEURISTIC, write_spec
from agentforge.inner import inner_outcome, submit_inner
from agentforge.scoring import pre_score
from agentforge.pool import Pool
from agentforge.runner import work
from agentforge.warm import INNER

def batch(spec:Path, seeds:list, warm:bool, cache:Path, slots:int=1) -> dict:
    "Queue one job per seed on a fresh pool, serve it until idle; the queue's timestamps and each job's result."
    threads = str(max(1, (os.cpu_count() or 1) // slots))  # as a run's pool does (episode._pool): one share of the cores
    pool = Pool(tempfile.mkdtemp(prefix='bench-warm-'), capacity={'inner': slots}, env=dict(OMP_NUM_THREADS=threads))
    jobs = [submit_inner(pool, spec, seed=s, cache_root=cache) for s in seeds]
    t0 = time.time()
    stats = work(pool, 'inner', slots=slots, until_idle=True, warm=INNER if warm else None)
    end = time.time()
    outs = [inner_outcome(pool, j, cache) for j in jobs]
    assert all(o['state'] == 'done' for o in outs), (stats, [o['error'] for o in outs])
    rows = [pool.get(j.id) for j in jobs]
    per = [dict(attempt=r.finished - r.started, train=o['result']['train_seconds'],
                score=o['result'].get('score_seconds')) for r, o in zip(rows, outs)]
    for p in per: p['overhead'] = p['attempt'] - p['train']
    first = min(rows, key=lambda r: r.started)
    return dict(wall=end - t0, per_job=per, start=first.started - t0, stop=end - max(r.finished for r in rows),
                first_extra=per[rows.index(first)]['overhead'])

def summary(bs:list, slots:int) -> dict:
    "Medians over a mode's batches (each batch's first job left out of the per-job figures)."
    steady = [p for b in bs for p in b['per_job'][slots:]]
    med = lambda xs: round(statistics.median(xs), 3) if xs else None
    return dict(overhead_per_job=med([p['overhead'] for p in steady]),
                scoring_per_job=med([p['score'] for p in steady if p['score'] is not None]),
                train_per_job=med([p['train'] for p in steady]), jobs_in_median=len(steady),
                first_job_extra=med([b['first_extra'] for b in bs]), worker_stop=med([b['stop'] for b in bs]),
                wall=[round(b['wall'], 2) for b in bs])

def spec_folder(brief:str, max_steps:int=48) -> Path:
    "A fresh folder holding the heuristic spec for `brief` (at `max_steps`), with the untrained student's score cached."
    root = Path(tempfile.mkdtemp(prefix='bench-warm-spec-')); (root / 'spec').mkdir()
    text = write_spec(brief, HEURISTIC).replace('max_steps: 48', f'max_steps: {max_steps}')
    (root / 'spec' / 'task.yaml').write_text(text)
    pre_score('tiny-student', brief)  # the pre score is cached for every mode alike
    return root

def save(out:str|None, rec:dict):
    "Write the figures as JSON to `out`, when one is given."
    if not out: return
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(rec, indent=1) + '\n')
    print('written', out)

def fmt(x) -> str: return 'not measured (a result without score_seconds)' if x is None else f'{x:.2f} s'

def main(brief:str, jobs:int, rounds:int, slots:int=1, first_seed:int=100, out:str|None=None):
    root = spec_folder(brief)
    cache = root / 'cache'
    from agentforge.warm import Warm
    t = time.monotonic(); w = Warm(INNER); start = time.monotonic() - t
    t = time.monotonic(); w.close(); stop = time.monotonic() - t
    res, seed = {'cold': [], 'warm': []}, first_seed
    for r in range(rounds):
        for mode in (('cold', 'warm') if r % 2 == 0 else ('warm', 'cold')):
            b = batch(root / 'spec', list(range(seed, seed + jobs)), mode == 'warm', cache, slots); seed += jobs
            res[mode].append(b)
            ov = ', '.join(f"{p['overhead']:.2f}" for p in b['per_job'])
            print(f"round {r + 1} {mode}: {jobs} jobs in {b['wall']:.1f} s; per job, attempt − training: {ov} s",
                  flush=True)
    rec = dict(brief=brief, jobs=jobs, rounds=rounds, slots=slots, first_seed=first_seed, cpus=os.cpu_count(),
               warm_process=dict(start=round(start, 2), stop=round(stop, 3)), preload=list(INNER),
               modes={m: summary(bs, slots) for m, bs in res.items()}, batches=res)
    for m, s in rec['modes'].items():
        print(f"{m}: overhead per job beyond training {s['overhead_per_job']:.2f} s (median of {s['jobs_in_median']} "
              f"jobs; of it the hidden scoring {fmt(s['scoring_per_job'])}); training {s['train_per_job']:.1f} s; "
              f"once per worker: the first job {s['first_job_extra']:.2f} s, the stop {s['worker_stop']:.2f} s")
    print(f"the warm process alone: start {start:.2f} s, stop {stop:.3f} s")
    save(out, rec)

def calls(brief:str, n:int, first_seed:int=100, out:str|None=None):
    "Per `work` call wall time, N calls of one new 4-step job each, without and with keep_warm."
    from agentforge.runner import close_kept
    root = spec_folder(brief, max_steps=4)
    cache, threads = root / 'cache', str(os.cpu_count() or 1)
    pool = Pool(tempfile.mkdtemp(prefix='bench-warm-'), capacity={'inner': 1}, env=dict(OMP_NUM_THREADS=threads))
    rec, seed = dict(brief=brief, calls=n, first_seed=first_seed, cpus=os.cpu_count()), first_seed
    for keep in (False, True):
        walls = []
        for _ in range(n):
            job = submit_inner(pool, root / 'spec', seed=seed, cache_root=cache); seed += 1
            t = time.monotonic(); work(pool, 'inner', slots=1, until_idle=True, warm=INNER, keep_warm=keep)
            walls.append(round(time.monotonic() - t, 2))
            assert inner_outcome(pool, job, cache)['state'] == 'done'
        close_kept()
        rec['keep_warm' if keep else 'per_call'] = walls
        print(f"keep_warm={keep}: seconds per call {walls} (median {statistics.median(walls):.2f})", flush=True)
    save(out, rec)

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--brief', default='unit_conversion')
    ap.add_argument('--jobs', type=int, default=3)
    ap.add_argument('--rounds', type=int, default=2)
    ap.add_argument('--slots', type=int, default=1, help='attempts at once, each with cores/slots torch threads (a run uses 2)')
    ap.add_argument('--first-seed', type=int, default=100, help='training seed of the first job (results are cached by seed)')
    ap.add_argument('--out', help='write the figures as JSON here (e.g. results/bench/warm.json)')
    ap.add_argument('--calls', type=int, default=0, help='measure N work() calls of one short job each, keep_warm off/on')
    a = ap.parse_args()
    if a.calls: calls(a.brief, a.calls, a.first_seed, a.out)
    else: main(a.brief, a.jobs, a.rounds, a.slots, a.first_seed, a.out)
