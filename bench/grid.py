"""Every spec the scripted and tiny agents can write, trained once: the whole design space of `agents.CHOICES`.

For each brief, each of the 24 combinations of `agents.CHOICES` (the rest of the spec as `agents.HEURISTIC`) is
written with `agents.write_spec` — byte for byte the text the scripted agents write and the tiny agent was cloned on —
probed as a first submission, and, when it validates, trained through the pool with warm workers exactly as an
episode's spec is (`episode._pool`, `inner.submit_inner`, seed 0, greedy scoring, the default hidden split). So the
inner results land in the same content-keyed cache an episode reads: an outer run afterwards meets them as `cached`
jobs, and its reports count them as such.

Prints one JSON row per spec and a per-brief summary: best, median and worst normalised gain among the valid specs,
the reference-preset reward of the best and worst valid spec, and the jobs' wall and training seconds.

Run: .venv/bin/python bench/grid.py [--briefs a,b] [--slots 2] [--out results/grid]
(120-144 inner jobs of 15-40 s on a fresh cache: about 20 minutes on 2 cores; a filled cache answers in seconds).
"""
import argparse, json, statistics, sys, tempfile, time
from pathlib import Path


def grid(briefs:list, slots:int, work:Path) -> list:
    from agentforge.agents import _product, write_spec
    from agentforge.episode import _pool
    from agentforge.grading import SAMPLES, episode_reward, speed_budget, uplift
    from agentforge.inner import inner_outcome, submit_inner
    from agentforge.landscape import _spec_folder
    from agentforge.probe import validate
    from agentforge.runner import work as serve
    from agentforge.warm import INNER
    pool, plan, t0 = _pool(work, work / 'pool', slots), [], time.monotonic()
    for brief in briefs:
        for c in _product():
            folder = _spec_folder(work, brief, write_spec(brief, c))
            rep = validate(folder, brief, attempt=1)
            if rep.infra(): raise RuntimeError(f'the probe could not judge {folder} ({rep.reason})')
            job = submit_inner(pool, folder, 'tiny-student', 0, SAMPLES, None, pool_name='inner') if rep.validated else None
            plan.append((brief, c, rep, job))
    queued = sum(j is not None and j.id is not None for *_, j in plan)
    print(f'{len(plan)} specs, {sum(j is not None for *_, j in plan)} valid, {queued} to train', file=sys.stderr)
    if pool.counts().get('inner', {}).get('queued'): serve(pool, 'inner', slots=slots, until_idle=True, warm=INNER)
    rows = []
    for brief, c, rep, job in plan:
        row = dict(brief=brief, **c, validated=rep.validated, reason=rep.reason)
        if job is not None:
            out = inner_outcome(pool, job); res = out['result'] or {}
            row.update(state=out['state'])
            if res:
                g = episode_reward(1, res['pre'], res['post'], res['train_seconds'], speed_budget(res['student']))
                row.update(pre=res['pre'], post=res['post'], gain=uplift(res['pre'], res['post'], 'normalized', floor=-1.0),
                           raw=round(res['post'] - res['pre'], 4), reward=round(g.total, 4),
                           train_seconds=res['train_seconds'], seconds=res.get('seconds'))
        else: row['reward'] = round(episode_reward(None).total, 4)
        rows.append(row); print(json.dumps(row), flush=True)
    print(f'{time.monotonic() - t0:.0f} s in all', file=sys.stderr)
    return rows


def summary(rows:list) -> str:
    lines = ['| brief | valid | best gain | median gain | worst gain | best reward | worst valid reward | job s (median) |',
             '|---|---|---|---|---|---|---|---|']
    for brief in dict.fromkeys(r['brief'] for r in rows):
        v = [r for r in rows if r['brief'] == brief and r.get('gain') is not None]
        n = sum(r['brief'] == brief for r in rows)
        if not v: lines.append(f'| {brief} | 0/{n} | — | — | — | — | — | — |'); continue
        g, rw = [r['gain'] for r in v], [r['reward'] for r in v]
        secs = [r['seconds'] for r in v if r.get('seconds')]
        lines.append(f"| {brief} | {len(v)}/{n} | {max(g):+.3f} | {statistics.median(g):+.3f} | {min(g):+.3f} | "
                     f"{max(rw):.3f} | {min(rw):.3f} | {statistics.median(secs) if secs else float('nan'):.1f} |")
    return '\n'.join(lines)


if __name__ == '__main__':
    from agentforge.families import FAMILIES
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--briefs', default=','.join(FAMILIES), help='comma-separated briefs (default: every family)')
    ap.add_argument('--slots', type=int, default=2, help='inner jobs at once')
    ap.add_argument('--out', default='results/grid', help='grid.json goes here')
    ap.add_argument('--work', default=None, help='spec folders and the pool (default: a temp folder)')
    a = ap.parse_args()
    work = Path(a.work or tempfile.mkdtemp(prefix='grid-')).resolve()
    rows = grid([b for b in a.briefs.split(',') if b], a.slots, work)
    out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    (out / 'grid.json').write_text(json.dumps(rows, indent=1))
    print(summary(rows))
