"""Benchmark the inner job: our wrapper vs the same TRL GRPOTrainer called directly, and uplift per family.

Run: .venv/bin/python bench/inner.py [--families string_ops arithmetic ...] [--repeats 2] [--set max_steps=100 ...]
     .venv/bin/python bench/inner.py --checkpointing date_math [--repeats 2] [--out FILE.json]

1. Overhead: `inner.train_spec` (dataset, reward wiring, atomic checkpoints every 20 steps, final save) against a
   plain `GRPOTrainer` built from the same `GRPOConfig` (no checkpoints), alternating A/B in one process so both see
   the same machine load. Target: ratio <= 1.10.
2. Per family: `inner.run_inner` on the family's example spec (rows.example_spec, n=256 rows), cache off: the hidden
   pre and post scores, the uplift, training seconds and the whole job's wall seconds (scoring processes included).
3. With `--checkpointing BRIEF` instead: `inner.train_spec` on the scripted heuristic spec for BRIEF (agents.HEURISTIC,
   lesson 12b), with TRL's gradient checkpointing on (TRL's default) and off (`inner.grpo_args`), alternating in one
   process: training seconds, the ratio of medians, and whether the last step's loss and reward agree.
4. With `--best results/landscape-habit/landscape.json`: each brief's `best` spec of that recorded landscape trained
   again with the cache off, one job at a time (run it under OMP_NUM_THREADS=1 for issue 11's "one core"): the
   training seconds and the whole job's (both hidden scorings in fresh processes included). With `--warm` as well:
   the same specs queued on a pool and served by one slot forking from a warm process (how an episode's pool runs
   them), after a 4-step job that pays the warm start and with the untrained student's scores computed before; the
   job's seconds are the queue's started → finished. (Without --warm, each job also scores the untrained student.)
Prints figures; asserts nothing (these machines are shared and noisy: targets live here, not in unit tests).
"""
import argparse, json, os, statistics, tempfile, time
from pathlib import Path
import yaml
from agentforge.families import FAMILIES
from agentforge.grading import uplift
from agentforge.inner import grpo_config, load_student_model, reward_functions, run_inner, train_spec, training_dataset
from agentforge.schema import load_spec
from agentforge.rows import example_spec, load_rows

def make_spec(family:str, where:Path, hidden:Path, overrides:dict) -> Path:
    "The family's example spec, with `grpo` fields overridden."
    d = example_spec(family, where, n=256, hidden_root=hidden)
    doc = yaml.safe_load((d / 'task.yaml').read_text()); doc['grpo'].update(overrides)
    (d / 'task.yaml').write_text(yaml.safe_dump(doc, sort_keys=False))
    return d

def direct_seconds(spec, rows, out:Path) -> float:
    "Wall seconds of trainer.train() for a GRPOTrainer built by hand from the same config (no checkpoints)."
    from trl import GRPOTrainer
    model, tok = load_student_model('tiny-student')
    fns, _ = reward_functions(spec, None)
    tr = GRPOTrainer(model=model, reward_funcs=fns, args=grpo_config(spec, out, seed=0), train_dataset=training_dataset(spec, rows),
                     processing_class=tok)
    t = time.monotonic(); tr.train(); return time.monotonic() - t

def wrapper_seconds(spec, rows, out:Path) -> float:
    "Wall seconds of inner.train_spec end to end (model load, trainer build, training, checkpoints, final save)."
    t = time.monotonic(); train_spec(spec, rows, out, seed=0); return time.monotonic() - t

def overhead(root:Path, hidden:Path, family:str, repeats:int, overrides:dict):
    spec = load_spec(make_spec(family, root / 'ovh', hidden, overrides)); rows = load_rows(spec, hidden_root=hidden)
    d, w = [], []
    for i in range(repeats):
        d.append(direct_seconds(spec, rows, root / f'direct{i}')); w.append(wrapper_seconds(spec, rows, root / f'wrap{i}'))
    print(f"\n1. overhead on {family} ({spec.grpo['max_steps']} steps): direct GRPOTrainer.train() {[round(x, 1) for x in d]} s, "
          f"inner.train_spec {[round(x, 1) for x in w]} s -> ratio of medians {statistics.median(w) / statistics.median(d):.3f} (target <= 1.10)")

def per_family(root:Path, hidden:Path, families:list, overrides:dict, seed:int):
    print(f"\n2. run_inner per family (example spec, n=256, seed {seed}, grpo overrides {overrides or 'none'})")
    print(f"{'family':18s} {'pre':>6s} {'post':>6s} {'post-pre':>8s} {'uplift':>6s} {'train_s':>7s} {'job_s':>6s}  reward first->last")
    ups = []
    for f in families:
        r = run_inner(make_spec(f, root / f, hidden, overrides), seed=seed, cache=False, hidden_root=hidden, cache_root=root / 'results')
        m = r.metrics.get('reward', {})
        ups.append(r.post - r.pre)
        print(f"{f:18s} {r.pre:6.3f} {r.post:6.3f} {r.post - r.pre:+8.3f} {r.uplift:6.3f} {r.train_seconds:7.1f} {r.seconds:6.1f}  "
              f"{m.get('first', float('nan')):.3f}->{m.get('last', float('nan')):.3f}")
    print(f"{'mean':18s} {'':6s} {'':6s} {statistics.mean(ups):+8.3f}")

def checkpointing(brief:str, repeats:int, out:str|None):
    "Train the same spec with gradient checkpointing on and off, alternating; print and save the figures."
    from agentforge import inner
    from agentforge.agents import write_spec
    d = Path(tempfile.mkdtemp(prefix='bench-gc-')); (d / 'task.yaml').write_text(write_spec(brief, {}))
    spec = load_spec(d); rows = load_rows(spec)
    base, runs = inner.grpo_args, {'on': [], 'off': []}
    train_spec(spec, rows, Path(tempfile.mkdtemp()), save_steps=0)  # warm-up: imports and the student's first load
    try:
        for _ in range(repeats):
            for mode in ('on', 'off'):
                inner.grpo_args = lambda *a, on=mode == 'on', **k: dict(base(*a, **k), gradient_checkpointing=on)
                t = train_spec(spec, rows, Path(tempfile.mkdtemp()), save_steps=0)
                last = t.history[-1]
                runs[mode].append(dict(seconds=round(t.seconds, 2), loss=last.get('loss'), reward=last.get('reward')))
    finally: inner.grpo_args = base
    med = {m: statistics.median(r['seconds'] for r in v) for m, v in runs.items()}
    same = all(a['loss'] == b['loss'] and a['reward'] == b['reward'] for a, b in zip(runs['on'], runs['off']))
    res = dict(brief=brief, steps=spec.grpo['max_steps'], runs=runs, ratio=round(med['off'] / med['on'], 3),
               same_last_step=same)
    print(f"gradient checkpointing on {[r['seconds'] for r in runs['on']]} s, off {[r['seconds'] for r in runs['off']]} s "
          f"-> ratio of medians (off / on) {res['ratio']}; last step's loss and reward identical: {same}")
    if out: Path(out).write_text(json.dumps(res, indent=1) + '\n')

def best_specs(land_json:str) -> list:
    "[(brief, its `best` row, the recorded spec folder beside the JSON)] of a recorded landscape, in its order."
    land = json.loads(Path(land_json).read_text())
    out = []
    for b in dict.fromkeys(r['brief'] for r in land['rows']):
        best = next(r for r in land['rows'] if r['brief'] == b and r['kind'] == 'best')
        out.append((b, best, Path(land_json).parent / 'specs' / b / Path(best['spec']).name))
    return out

def gain(pre:float, post:float) -> float:
    "The normalised gain as the landscape records it (`landscape.evaluate_spec`), to 4 decimals."
    return round(uplift(pre, post, 'normalized', floor=-1.0), 4)

def report(res:dict, rows:list, label:str, out:str|None):
    "Print the best specs' training and job seconds; write `res` to `out` when one is given."
    print(f"best spec per brief, {label}OMP_NUM_THREADS={res['omp_num_threads']}: "
          f"train {[x['train_seconds'] for x in rows]} s, whole job {[x['job_seconds'] for x in rows]} s")
    if out: Path(out).write_text(json.dumps(res, indent=1) + '\n')

def best_jobs(land_json:str, out:str|None):
    "Each brief's best spec of a recorded landscape, trained again (cache off) in this process: train and job seconds."
    root, rows = Path(tempfile.mkdtemp(prefix='bench-best-')), []
    threads = os.environ.get('OMP_NUM_THREADS', 'unset')
    for b, best, spec in best_specs(land_json):
        r = run_inner(spec, seed=0, cache=False, cache_root=root / 'results')
        rows.append(dict(brief=b, of=best['of'], train_seconds=r.train_seconds, job_seconds=r.seconds,
                         gain=gain(r.pre, r.post), recorded_gain=best['gain']))
        print(json.dumps(rows[-1]), flush=True)
    report(dict(landscape=land_json, omp_num_threads=threads, rows=rows), rows, '', out)

def best_jobs_warm(land_json:str, out:str|None):
    """The same specs as `best_jobs`, queued on a fresh pool and served by one worker slot whose attempts and hidden
    scorings fork from a warm process (`runner.work(warm=INNER)`, as an episode's pool runs them). A 4-step job runs
    first, so the warm process's start is not in any best spec's figure, and the untrained student's hidden scores are
    computed before (an episode computes them once per family). Job seconds = the queue's started → finished."""
    from agentforge.agents import HEURISTIC, write_spec
    from agentforge.inner import inner_outcome, submit_inner
    from agentforge.pool import Pool
    from agentforge.runner import work
    from agentforge.scoring import pre_scores
    from agentforge.warm import INNER
    root, threads = Path(tempfile.mkdtemp(prefix='bench-best-warm-')), os.environ.get('OMP_NUM_THREADS', 'unset')
    pool, cache = Pool(root / 'pool', capacity={'inner': 1}, env=dict(OMP_NUM_THREADS='1')), root / 'results'
    specs = best_specs(land_json)
    (root / 'first').mkdir()
    (root / 'first' / 'task.yaml').write_text(write_spec(specs[0][0], HEURISTIC | dict(max_steps=4)))
    jobs = [('(first: the warm start)', None, submit_inner(pool, root / 'first', seed=0, cache_root=cache))]
    jobs += [(b, best, submit_inner(pool, spec, seed=0, cache_root=cache)) for b, best, spec in specs]
    for b, _, _ in specs: pre_scores('tiny-student', b, cache_root=cache)  # once per family, as in an episode
    t0 = time.monotonic(); work(pool, 'inner', slots=1, until_idle=True, warm=INNER); wall = time.monotonic() - t0
    rows = []
    for b, best, job in jobs:
        o, q = inner_outcome(pool, job, cache), pool.get(job.id)
        assert o['state'] == 'done', (b, o['state'], o['error'])  # a job that did not finish has no time to report
        r = o['result']
        rows.append(dict(brief=b, of=best and best['of'], train_seconds=r['train_seconds'],
                         score_seconds=r.get('score_seconds'), job_seconds=round(q.finished - q.started, 3),
                         gain=gain(r['pre'], r['post']), recorded_gain=best and best['gain']))
        print(json.dumps(rows[-1]), flush=True)
    res = dict(landscape=land_json, mode='warm', omp_num_threads=threads, wall=round(wall, 1), rows=rows)
    report(res, rows[1:], 'warm worker, ', out)

def main(a):
    if a.checkpointing: return checkpointing(a.checkpointing, a.repeats, a.out)
    if a.best: return (best_jobs_warm if a.warm else best_jobs)(a.best, a.out)
    overrides = {k: yaml.safe_load(v) for k, v in (s.split('=', 1) for s in a.set)}
    root = Path(tempfile.mkdtemp(prefix='bench-inner-')); hidden = root / 'platform'
    t = time.monotonic(); load_student_model('tiny-student'); print(f"student load: {time.monotonic() - t:.2f} s")
    if not a.skip_overhead: overhead(root, hidden, a.overhead_family, a.repeats, overrides)
    per_family(root, hidden, a.families, overrides, a.seed)

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--families', nargs='+', default=sorted(FAMILIES), help='families for the per-family table')
    ap.add_argument('--repeats', type=int, default=2, help='A/B pairs for the overhead figure')
    ap.add_argument('--overhead-family', default='string_ops', help='the spec timed for the overhead figure')
    ap.add_argument('--skip-overhead', action='store_true', help='only the per-family table')
    ap.add_argument('--set', nargs='*', default=[], metavar='KEY=VALUE', help="override grpo fields, e.g. max_steps=100")
    ap.add_argument('--seed', type=int, default=0, help='training and scoring seed')
    ap.add_argument('--checkpointing', metavar='BRIEF', help='time gradient checkpointing on against off instead')
    ap.add_argument('--best', metavar='LANDSCAPE_JSON', help="train each brief's best spec of a recorded landscape instead")
    ap.add_argument('--warm', action='store_true',
                    help='with --best: run them through a pool worker with a warm process, as episodes do')
    ap.add_argument('--out', help='with --checkpointing or --best: write the figures here (JSON)')
    main(ap.parse_args())
