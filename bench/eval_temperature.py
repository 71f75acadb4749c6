"""How much of the held-out transfer is lost to sampling? Evaluate finished runs' last adapter at other temperatures.

For each run folder (its last checkpoint under `checkpoints/`) and each evaluation temperature T, the run's transfer
stage is played again in `OUT/<config>/<run>/T-<T>/` with `RunConfig.eval_temperature = T`: the trained agent (the
last adapter) and the untrained one both sample at T on the run's own evaluation seeds (the same 24 held-out jobs),
and again at the run's sampling temperature on the held-out jobs (`trained@0.7`: this reproduces the run's own
`transfer.json`), the scripted agents as they are. Only the held-out family is evaluated (`eval_trained=()`). Inner
results come from the data dir's content cache, so a spec any earlier run trained is not trained again.

Per run and T it prints the held-out trained and untrained means, the paired difference with its 95% interval and
the validation rates, at T and at the sampling temperature; `OUT/summary.json` keeps them.

With `--fixed`, the run's fixed evaluation (lesson 12c: the same seeds on every family, first attempt) is played
instead, by the untrained agent (the run's step 0) and the last adapter (its last evaluation), both at T, and the
paired last − first is printed for the trained families and the held-out one, as the report's curve states it. At
the run's own temperature this reproduces its `curve.jsonl` first and last rows.

Run: AGENTFORGE_CACHE_DIR=… AGENTFORGE_DATA_DIR=… .venv/bin/python bench/eval_temperature.py \
        --temperatures 0.5,0.3,0.1 --out runs/eval-t [--joint] [--fixed] RUN [RUN ...]
     with the runs' cache (their agent base) and data dir (their inner results); --joint for bases cloned with
     CloneRecipe(joint=True)
"""
import argparse, dataclasses, json, statistics
from pathlib import Path


def _row(v:dict, table:dict, trained:str, untrained:str) -> dict:
    return dict(trained=round(v['trained_ci']['mean'], 4), untrained=round(v['untrained_ci']['mean'], 4),
                diff=[round(v['diff'][k], 4) for k in ('mean', 'lo', 'hi')],
                valid=[table[trained]['validation_rate'], table[untrained]['validation_rate']])


def evaluate_at(run:Path, t:float, out:Path, joint:bool) -> dict:
    from agentforge.cloning import CloneRecipe, load_tiny_agent
    from agentforge.config import load_config
    from agentforge.durable import latest_checkpoint
    from agentforge.run import transfer_stage
    cfg = load_config(run)
    cfg = dataclasses.replace(cfg, eval_temperature=t, eval_trained=())
    clone = CloneRecipe(joint=joint)
    out.mkdir(parents=True, exist_ok=True)
    adapter = latest_checkpoint(run / 'checkpoints') / 'adapter'  # the newest whose manifest verifies
    trained = load_tiny_agent(clone, adapter=str(adapter), progress=False, temperature=cfg.temperature,
                              name='trained')
    v = transfer_stage(cfg, out, trained, progress=False, clone=clone)
    rows = json.loads((out / 'transfer.json').read_text())['table']
    table = {r['agent']: r for r in rows if r['split'] == 'held-out'}
    at = f'@{cfg.temperature:g}'
    row = dict(run=f'{run.parent.name}/{run.name}', t=t, **_row(v, table, 'trained', 'untrained'))
    if 'at_sampling' in v:
        row['sampling'] = dict(t=cfg.temperature, **_row(v['at_sampling'], table, f'trained{at}', f'untrained{at}'))
    return row


def fixed_at(run:Path, t:float, out:Path, joint:bool) -> dict:
    "The fixed evaluation's first (untrained) and last (the last adapter) rows played again at `t`; their change."
    from agentforge.cloning import CloneRecipe, load_tiny_agent
    from agentforge.config import load_config, split_families
    from agentforge.curve import _totals, curve_change, curve_jobs, curve_row
    from agentforge.durable import latest_checkpoint
    from agentforge.episode import Budgets, episode_env, finish_episodes, play_episodes, train_and_grade
    from agentforge.families import FAMILIES
    from agentforge.run import _env, at_temperature
    cfg, clone = load_config(run), CloneRecipe(joint=joint)
    out.mkdir(parents=True, exist_ok=True)
    env = episode_env(_env(cfg, out), budgets=Budgets(max_attempts=1))
    adapter = str(latest_checkpoint(run / 'checkpoints') / 'adapter')
    agents = [(0, load_tiny_agent(clone, progress=False, temperature=cfg.temperature, name='untrained')),
              (cfg.outer.steps, load_tiny_agent(clone, adapter=adapter, progress=False, temperature=cfg.temperature,
                                                name='trained'))]
    jobs, rows = curve_jobs(FAMILIES, cfg.curve_seeds, cfg.outer.seed), []
    for step, agent in agents:
        agent, where = at_temperature(agent, t), out / f'step-{step:03d}'
        recs = train_and_grade(play_episodes(agent, jobs, where, env, tag='curve'), where, env)
        rows.append(curve_row(step, finish_episodes(agent, recs, where, env, tag='curve')))
    trained, held = split_families(cfg.holdout)
    def change(briefs):  # as the report states it: the first and last means, and the paired difference
        mean = lambda row: round(statistics.fmean(_totals(row, set(briefs)).values()), 4)
        d = curve_change(rows, briefs)  # one bootstrap
        return dict(first=mean(rows[0]), last=mean(rows[-1]), diff=[round(d[x], 4) for x in ('mean', 'lo', 'hi')])
    valid = [r['counts']['validated'] / r['counts']['episodes'] for r in rows]
    return dict(run=f'{run.parent.name}/{run.name}', t=t, valid=[round(v, 3) for v in valid],
                trained=change(trained), held=change(held))


def _fixed_text(r:dict) -> str:
    return '; '.join(f"{k} {c['first']:.3f} -> {c['last']:.3f} diff {c['diff'][0]:+.3f} "
                     f"[{c['diff'][1]:+.3f}, {c['diff'][2]:+.3f}]" for k, c in r.items() if k in ('trained', 'held')
                     ) + f" valid {r['valid']}"


def _text(r:dict) -> str:
    return (f"trained {r['trained']:.3f} untrained {r['untrained']:.3f} diff {r['diff'][0]:+.3f} "
            f"[{r['diff'][1]:+.3f}, {r['diff'][2]:+.3f}] valid {r['valid']}")


if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--temperatures', default='0.5,0.3,0.1', help='comma-separated evaluation temperatures (> 0)')
    ap.add_argument('--out', required=True, help='where each run × temperature is played')
    ap.add_argument('--joint', action='store_true',
                    help='the runs used an agent base cloned with joint=True (without: joint=False, the '
                         'default before 2026-12-06)')
    ap.add_argument('--fixed', action='store_true',
                    help="the fixed evaluation's first and last rows instead of the transfer stage")
    ap.add_argument('runs', nargs='+')
    a = ap.parse_args()
    temps = [float(x) for x in a.temperatures.split(',')]
    if any(t <= 0 for t in temps): ap.error('temperatures must be > 0 (the greedy mode is already in transfer.json)')
    out, rows = Path(a.out), []
    for run in map(Path, a.runs):
        for t in temps:
            where = out / run.parent.name / run.name / f'T-{t}'
            if a.fixed:
                rows.append(r := fixed_at(run, t, where, a.joint))
                print(f"{r['run']} T={t}: {_fixed_text(r)}", flush=True)
                continue
            r = evaluate_at(run, t, where, a.joint)
            rows.append(r)
            print(f"{r['run']} T={t}: {_text(r)}" + (f"; at {r['sampling']['t']:g}: {_text(r['sampling'])}"
                                                      if 'sampling' in r else ''), flush=True)
    for t in temps:
        if a.fixed:
            for k in ('trained', 'held'):
                d = [r[k]['diff'][0] for r in rows if r['t'] == t]
                print(f"T={t} {k}: median last - first {statistics.median(d):+.3f} ({min(d):+.3f} to {max(d):+.3f}), "
                      f"interval above 0 in {sum(r[k]['diff'][1] > 0 for r in rows if r['t'] == t)} of {len(d)}")
            continue
        d = [r['diff'][0] for r in rows if r['t'] == t]
        print(f"T={t}: median diff {statistics.median(d):+.3f} ({min(d):+.3f} to {max(d):+.3f}), "
              f"interval above 0 in {sum(r['diff'][1] > 0 for r in rows if r['t'] == t)} of {len(d)}")
    out.mkdir(parents=True, exist_ok=True)
    (out / 'summary.json').write_text(json.dumps(rows, indent=1) + '\n')
