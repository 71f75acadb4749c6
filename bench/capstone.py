"""The capstone's jobs (lesson 13d_capstone) over several training seeds: what starting a second client's job from the
first client's best spec saved, with intervals.

Per seed, in a private data dir: Acme Home's three trained specs (the scripted agent's draft, the template, the
template tuned: 256 rows, lr 6e-4), then Brightpath's job from Acme's best spec of that seed (`library export
--brief`) against Brightpath's own first tries (template, draft), and Brewline (words the student never says: the
template and the tuned spec, which the probe refuses as SATURATED_NEVER; recorded as refused, never as a result). Uplift is the normalised gain on each client's eval file (greedy, 256 items); the
interval is a t interval over seeds of the paired difference, the per-job scoring SE beside it.

Run: .venv/bin/python bench/capstone.py [--seeds 0,1] [--out results/capstone/capstone.json]
(about 17 min a seed with OMP_NUM_THREADS=1; --work DIR keeps the platform, and a rerun reuses its cached jobs). Recorded: results/capstone/capstone.json, shown in lesson 13d_capstone.
"""
import argparse, json, os, re, shutil, statistics, sys, tempfile, time
from pathlib import Path

def run(seeds:list, out:Path, work:str|None=None):
    work = Path(work) if work else Path(tempfile.mkdtemp(prefix='capstone-bench-'))  # a kept one: its cached jobs
    os.environ['AGENTFORGE_DATA_DIR'] = str(work / 'data')
    from typer.testing import CliRunner
    from agentforge.cli import app
    from agentforge.clients import CLIENTS, write_client
    def af(*a, ok=(0,)):
        r = CliRunner().invoke(app, [str(x) for x in a])
        if r.exit_code not in ok: sys.exit(f"agentforge {' '.join(map(str, a))}: exit {r.exit_code}\n{r.output[-2000:]}")
        return r
    for name in CLIENTS:
        d = write_client(name, work / name)
        af('family', 'add', name, '--train', d / 'train.jsonl', '--eval', d / 'eval.jsonl', '--scorer', 'support',
           '--brief', CLIENTS[name]['brief'], '--replace')
    def spec(name, kind):
        d = work / 'specs' / f'{name}-{kind}'
        if d.exists(): return d
        if kind == 'draft':  # the scripted agent's draft, copied beside the others
            shutil.copytree(re.search(r'Spec: (\S+)', af('draft', name, '--agent', 'scripted', '--out',
                                                          work / 'drafts' / name).stdout)[1], d)
            return d
        af('spec', 'init', name, d)
        if kind == 'tuned':
            y = d / 'task.yaml'
            y.write_text(y.read_text().replace('generate: {n: 64, seed: 7}', 'generate: {n: 256, seed: 7}')
                         .replace('learning_rate: 0.0003', 'learning_rate: 0.0006'))
        return d
    rows = []
    def train(client, kind, path, seed):
        t = time.monotonic()
        r = af('train', path, '--seed', seed, '--json', ok=(0, 1))
        if r.exit_code:  # the probe refused it: recorded as such, never as a result
            rows.append(dict(client=client, kind=kind, seed=seed, refused=r.output.strip().splitlines()[-1][:300]))
            print(json.dumps(rows[-1]), flush=True)
            return rows[-1]
        res = json.loads(r.stdout.strip().splitlines()[-1])
        rows.append(dict(client=client, kind=kind, seed=seed, pre=res['pre'], post=res['post'], uplift=res['uplift'],
                         uplift_se=res['uplift_se'], train_seconds=res['train_seconds'],
                         minutes=round(res['seconds'] / 60, 2), cached=res.get('cached', False),  # the job's own time
                         resumed=bool(res.get('resumed_from'))))
        print(json.dumps(rows[-1]), flush=True)
        return rows[-1]
    for s in seeds:
        acme = {k: train('acme_home', k, spec('acme_home', k), s) for k in ('draft', 'template', 'tuned')}
        best = max(acme, key=lambda k: acme[k]['uplift'])
        src = spec('acme_home', best)
        d = work / 'specs' / f'brightpath-from-acme-{s}'
        y = (src / 'task.yaml').read_text()
        d.mkdir(parents=True, exist_ok=True); (d / 'task.yaml').write_text(re.sub(r'^brief:.*$', 'brief: brightpath', y, flags=re.M))
        r = train('brightpath', 'from-acme', d, s); r['from'] = best
        for k in ('template', 'draft'): train('brightpath', k, spec('brightpath', k), s)
        for k in ('template', 'tuned'): train('brewline', k, spec('brewline', k), s)
    return summarise(rows, seeds)

def t_interval(xs:list) -> tuple:
    "Mean and 95% t interval over seeds (n < 2: no interval)."
    m = statistics.mean(xs)
    if len(xs) < 2: return m, None, None
    t975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}[len(xs) - 1]
    h = t975 * statistics.stdev(xs) / len(xs) ** 0.5
    return m, m - h, m + h

def _minutes(rs:list) -> str:
    "Mean job minutes over the jobs that ran whole (a job resumed from a checkpoint of a killed run timed only its end)."
    whole = [r['minutes'] for r in rs if not r.get('resumed')]
    return f"{statistics.mean(whole):.1f}" if whole else 'not timed (resumed)'

def summarise(rows:list, seeds:list) -> dict:
    def of(c, k): return [r for r in rows if r['client'] == c and r['kind'] == k and 'refused' not in r]
    def refused(c, k): return [r['refused'] for r in rows if r['client'] == c and r['kind'] == k and 'refused' in r]
    def fmt(xs):
        m, lo, hi = t_interval(xs)
        return f"{m:+.3f}" + (f" [{lo:+.3f}, {hi:+.3f}]" if lo is not None else '')
    lines = ['| client | spec | uplift, mean over seeds [95% t] | scoring SE | post | job minutes |', '|---|---|---|---|---|---|']
    for c, k in [('acme_home', 'draft'), ('acme_home', 'template'), ('acme_home', 'tuned'), ('brightpath', 'from-acme'),
                 ('brightpath', 'template'), ('brightpath', 'draft'), ('brewline', 'template'), ('brewline', 'tuned')]:
        rs = of(c, k)
        if not rs:
            lines.append(f"| {c} | {k} | refused by the probe on every seed: {refused(c, k)[0]} | | | |")
            continue
        lines.append(f"| {c} | {k} | {fmt([r['uplift'] for r in rs])} | {statistics.mean(r['uplift_se'] for r in rs):.3f} "
                     f"| {statistics.mean(r['post'] for r in rs):.3f} | {_minutes(rs)} |")
    diffs = {k: [a['uplift'] - b['uplift'] for a, b in zip(of('brightpath', 'from-acme'), of('brightpath', k))]
             for k in ('template', 'draft')}
    acme_min = [sum(r['minutes'] for r in rows if r['client'] == 'acme_home' and r['seed'] == s) for s in seeds
                if not any(r.get('resumed') for r in rows if r['client'] == 'acme_home' and r['seed'] == s)]
    text = '\n'.join(lines) + (
        f"\n\nBrightpath from Acme's best minus Brightpath's template: {fmt(diffs['template'])}; minus the draft: "
        f"{fmt(diffs['draft'])} (paired by seed). Acme's search: 3 trained specs, {statistics.mean(acme_min):.1f} job "
        f"minutes a seed; Brightpath from the library: 1 spec. Seeds {seeds}.")
    return dict(seeds=seeds, rows=rows, table=text, diffs=diffs,
                how='.venv/bin/python bench/capstone.py --seeds ' + ','.join(map(str, seeds)))

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--seeds', default='0,1', help='training seeds, comma-separated')
    ap.add_argument('--out', default='results/capstone/capstone.json')
    ap.add_argument('--work', default=None, help="a work folder to keep (or reuse: its platform's cached jobs)")
    a = ap.parse_args()
    res = run([int(s) for s in a.seeds.split(',')], Path(a.out), a.work)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True); Path(a.out).write_text(json.dumps(res, indent=1) + '\n')
    print(res['table'])
