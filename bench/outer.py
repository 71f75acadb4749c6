"""Does the outer loop learn, and does it transfer? The same two-loop run on several seeds, median and spread.

Each seed is a whole `run.two_loop` (outer steps, fixed evaluations, transfer stage) in `OUT/seed-<s>/`; a finished
folder is read, not rerun. Per seed it reports, from the run's own files:

- the policy probe's probability of a good learning rate (1e-4 or 3e-4: the one choice that moves reward on every
  family, `results/grid/`) before the first and the last step, on the trained families (mean) and the held-out one;
- first-try validation over the first and last 5 steps;
- the fixed evaluation's paired last − first change, trained families and held-out (lesson 12c), and the share of the
  gap to the best-seen line it closed (`curve.headroom`; needs the run's episodes: folders without them have none);
- `step_ceiling`: the most a training step's expected mean reward can be with the specs the run saw;
- the transfer stage's held-out trained − untrained difference with its 95% interval;
- the median seconds per outer step; the training reward at step 0 and its peak;
- in a run that offers the larger student (`--set students=tiny-student-large`), the probe's probability of naming it,
  trained families (mean) and held-out, before the first and the last step.

Then the median and the min–max spread over seeds. Fast only when the inner-result cache holds the design space:
run `bench/grid.py` first (an outer step is then seconds; without it, minutes).

Run: .venv/bin/python bench/outer.py --seeds 0,1,2 --steps 30 --out results/outer/numbers
     .venv/bin/python bench/outer.py --free-merges --clone-steps 300 --seeds 0,1,2 --out results/outer/free
     .venv/bin/python bench/outer.py --clone-set offer=0 --seeds 0,1,2 --steps 54 --out results/outer/no-offer
     .venv/bin/python bench/outer.py --clone-set joint=false ...   (the agent base without one step-size token:
                                                                 the default before 2026-12-06)
     .venv/bin/python bench/outer.py --summarize runs/a runs/b     (read finished run folders only)
"""
import argparse, json, statistics, sys
from pathlib import Path

GOOD_LR = ('1.0e-4', '3.0e-4')


def _good(row:dict, brief:str) -> float:
    return sum(row['policy'][brief]['learning_rate'].get(o, 0.0) for o in GOOD_LR)


def summarize_run(folder:Path) -> dict:
    "The bench's figures for one finished run folder."
    from agentforge.config import load_config
    from agentforge.curve import best_seen, curve_change, headroom, step_ceiling
    from agentforge.outer import read_metrics
    folder = Path(folder)
    cfg = load_config(folder)
    held, best = cfg.holdout, best_seen(folder)  # best: {} where the episodes were not kept
    rows, curve = read_metrics(folder), read_metrics(folder, name='curve.jsonl')
    first, last = rows[0], rows[-1]
    trained = [b for b in first['policy'] if b != held]
    mean = lambda xs: round(statistics.mean(xs), 4)
    out = dict(run=str(folder), steps=len(rows),
               probe_trained=[mean([_good(r, b) for b in trained]) for r in (first, last)],
               probe_held=[round(_good(r, held), 4) for r in (first, last)],
               first_try=[mean([r['validation_first_try_rate'] for r in rows[:5]]),
                          mean([r['validation_first_try_rate'] for r in rows[-5:]])],
               seconds_per_step=round(statistics.median(r['seconds'] for r in rows), 2),
               reward=[round(rows[0]['reward_mean'], 4), round(max(r['reward_mean'] for r in rows), 4)])
    if 'student' in first['policy'][held]:  # a run that offers the larger student: how often the policy names it
        p = lambda r, b: r['policy'][b]['student'].get('tiny-student-large', 0.0)
        out['student_trained'] = [mean([p(r, b) for b in trained]) for r in (first, last)]
        out['student_held'] = [round(p(r, held), 4) for r in (first, last)]
    fams = list(dict.fromkeys(e['brief'] for e in curve[0]['episodes'])) if curve else []
    for name, briefs in (('curve_trained', [f for f in fams if f != held]), ('curve_held', [held])):
        ch = curve_change(curve, briefs) if curve else None
        out[name] = ch and {k: round(ch[k], 4) for k in ('mean', 'lo', 'hi')} | {'n': ch['n']}
        h = headroom(curve, best, briefs) if curve else None  # how much of the gap to the best-seen line it closed
        out[f'{name}_headroom'] = h and {k: None if v is None else round(v, 4) for k, v in h.items()}
    c = step_ceiling(best, trained, cfg.outer.briefs_per_step)
    out['step_ceiling'] = c and dict(c, mean=round(c['mean'], 4))  # the most a step's expected mean reward can be
    t = folder / 'transfer.json'
    if t.exists():
        v = json.loads(t.read_text())['verdict']
        d = v.get('diff') or {}
        out['transfer_diff'] = {k: round(d[k], 4) for k in ('mean', 'lo', 'hi') if k in d} or None
    return out


def spread(runs:list) -> dict:
    "Median and [min, max] over runs of each scalar figure (pairs: their second, 'last', element; dicts: 'mean')."
    def val(r, k):
        v = r.get(k)
        if isinstance(v, list): return v[1]
        if isinstance(v, dict): return v.get('mean', v.get('closed'))  # headroom: the share of the gap closed
        return v
    keys = ['probe_trained', 'probe_held', 'student_trained', 'student_held', 'reward', 'first_try', 'curve_trained',
            'curve_held', 'curve_trained_headroom', 'curve_held_headroom', 'step_ceiling', 'transfer_diff',
            'seconds_per_step']
    out = {}
    for k in keys:
        xs = [val(r, k) for r in runs if val(r, k) is not None]
        if xs: out[k] = dict(median=round(statistics.median(xs), 4), min=round(min(xs), 4), max=round(max(xs), 4), n=len(xs))
    return out


if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--seeds', default='0,1,2', help='comma-separated run seeds')
    ap.add_argument('--steps', type=int, default=30, help='outer steps per run')
    ap.add_argument('--out', default='results/outer/default', help='seed-<s>/ run folders and summary.json go here')
    ap.add_argument('--free-merges', action='store_true', help='the agent base without CloneRecipe.numbers')
    ap.add_argument('--clone-steps', type=int, default=None, help='CloneRecipe.steps (default: the recipe default)')
    ap.add_argument('--clone-set', nargs='*', default=[], metavar='NAME=VALUE',
                    help='CloneRecipe fields other than the defaults, e.g. offer=0 slips=0')
    ap.add_argument('--set', nargs='*', default=[], metavar='NAME=VALUE',
                    help='run settings other than the defaults (RunConfig/OuterConfig fields), e.g. learning_rate=3e-3')
    ap.add_argument('--summarize', nargs='*', metavar='RUN', help='only summarise these finished run folders')
    a = ap.parse_args()
    if a.summarize:
        runs = [summarize_run(Path(p)) for p in a.summarize]
    else:
        import dataclasses
        from agentforge.cloning import CloneRecipe
        from agentforge.config import RunConfig
        from agentforge.run import two_loop
        clone = CloneRecipe(numbers=not a.free_merges)
        if a.clone_steps: clone = dataclasses.replace(clone, steps=a.clone_steps)
        import yaml
        def field_value(name, v):  # the field's own type: 'false' for a bool, '0' for a float stays 0.0 (the recorded keys)
            old = getattr(clone, name)
            return v.lower() in ('1', 'true', 'yes') if isinstance(old, bool) else type(old)(v)
        clone = dataclasses.replace(clone, **{k: field_value(k, v) for k, v in (x.split('=', 1) for x in a.clone_set)})
        out, runs = Path(a.out), []
        def value(v):  # '4' -> 4, '3e-3' -> 0.003 (YAML 1.1 reads '3e-3' as text), 'token' -> 'token'
            for cast in (int, float):
                try: return cast(v)
                except ValueError: pass
            return yaml.safe_load(v)
        extra = {k: value(v) for k, v in (x.split('=', 1) for x in a.set)}
        for s in [int(x) for x in a.seeds.split(',') if x]:
            folder = out / f'seed-{s}'
            if not (folder / 'transfer.json').exists():
                try: two_loop(RunConfig.of(steps=a.steps, seed=s, **extra), folder, clone=clone)
                except KeyboardInterrupt: sys.exit(130)  # two_loop said what was saved; the same command resumes
            runs.append(summarize_run(folder)); print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
        (out / 'summary.json').write_text(json.dumps(dict(clone=dataclasses.asdict(clone), steps=a.steps, set=extra, runs=runs,
                                                        spread=spread(runs)), indent=1))
    for r in runs: print(json.dumps(r))
    print(json.dumps(spread(runs), indent=1))
