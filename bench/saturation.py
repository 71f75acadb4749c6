"""The probe's saturation gate across installs: which specs does it refuse, and do its refusals hold up when trained?

Each install is an empty data dir holding one of `results/installs/<x>.secret.key`, so its hidden splits, its training
rows and the 48 rows the gate samples are that install's (retro 2026-12-07-two-installs-two-demos). On every family,
every spec of the scripted space that the gate can tell apart (the rewards x level x temperature of `agents.KNOBS`,
the heuristic otherwise: 108 specs) is gated twice on the same rows:
- `old`: the gate before 2026-12-07: 48 prompts x 8, each share's point estimate against its bar;
- `new`: `probe.check_saturation` as it is: refused only past a bar by two standard errors; 192 prompts where 48
  cannot tell; still too near: passed as borderline.
`--train X,Y` then trains, on installs X and Y, every spec the old gate saw within reach of the 90% bar (48-prompt
flat share >= 0.75, pass rate >= 2%) with `inner.run_inner` whatever either gate said, and scores it greedily on the
hidden split (lesson 12b's protocol): does a spec the old gate refused learn less?
Writes `--out`/gate.jsonl and `--out`/train.jsonl (resumable: rows already there are kept) and prints the tables.
Asserts nothing.

Run: .venv/bin/python bench/saturation.py --installs a,b,c --out results/saturation &
     .venv/bin/python bench/saturation.py --installs d,e,f --out results/saturation --part 2 --train a,d
     (about 10 minutes a process for the gates on two cores, then ~20 s an inner job; the table: --table DIR)
Recorded: results/saturation/, lesson 06.
"""
import argparse, itertools, json, time
from pathlib import Path

FAMILIES = ('multihop_lookup', 'arithmetic', 'unit_conversion', 'date_math', 'customer_support', 'string_ops')
REPO = Path(__file__).resolve().parents[1]

def install(name:str, root:Path) -> Path:
    "An empty data dir holding install `name`'s secret: its hidden splits are drawn again on first use."
    d = root / f'install-{name}'; d.mkdir(parents=True, exist_ok=True)
    key = (REPO / 'results' / 'installs' / f'{name}.secret.key').read_bytes()
    if not (d / 'secret.key').exists(): (d / 'secret.key').write_bytes(key)
    assert (d / 'secret.key').read_bytes() == key, f'{d} holds another secret'
    return d

def old_verdict(rate:float, flat:float) -> str|None:
    "The gate before 2026-12-07, on its 48 x 8 sample: each share's point estimate against its bar."
    from agentforge.probe import SAT_ALWAYS, SAT_FLAT, SAT_NEVER
    return ('SATURATED_NEVER' if rate < SAT_NEVER else 'SATURATED_ALWAYS' if rate > SAT_ALWAYS
            else 'SATURATED_GROUPS' if flat > SAT_FLAT else None)

def gate_rows(name:str, root:Path, work:Path, done:set):
    "Yield one row per spec of install `name`: both verdicts on the same first 48 prompts, and the new one's message."
    from agentforge import probe
    from agentforge.agents import write_spec
    from agentforge.rows import load_rows
    from agentforge.schema import load_spec
    data = install(name, root)
    for fam, rw, lv, T in itertools.product(FAMILIES, ('strict', 'lenient'), (1, 2, 3), (0.7, 1.0, 1.3)):
        d = work / name / f'{fam}-{rw}-{lv}-{T}'
        if str(d) in done: continue
        d.mkdir(parents=True, exist_ok=True)
        (d / 'task.yaml').write_text(write_spec(fam, dict(reward=rw, level=lv, temperature=T)))
        spec = load_spec(d); rows = load_rows(spec, hidden_root=data)
        sub = probe._gate_rows(rows)[0]   # the gate's first 48 rows
        G = min(probe.SAT_GROUP, spec.grpo['num_generations'])
        rate, flat = probe._shares(probe._sampled_totals(spec, sub, G, 0, None), G)   # the gate's first stage
        t0 = time.monotonic(); c = probe.check_saturation(spec, rows, None, cache=False)
        yield dict(install=name, family=fam, reward=rw, level=lv, temperature=T, spec=str(d), rate48=rate,
                   flat48=flat, old=old_verdict(rate, flat), new=c.code, message=c.message,
                   seconds=round(time.monotonic() - t0, 2))

def train_rows(gates:list, installs:list, root:Path, done:set):
    "Yield one row per near-the-bar spec of `installs`, trained once (seed 0) and scored greedily on the hidden split."
    from agentforge.grading import uplift
    from agentforge.inner import run_inner
    for g in gates:
        if g['install'] not in installs or g['flat48'] < 0.75 or g['rate48'] < 0.02 or g['spec'] in done: continue
        r = run_inner(g['spec'], 'tiny-student', 0, hidden_root=install(g['install'], root))
        yield {k: g[k] for k in ('install', 'family', 'reward', 'level', 'temperature', 'spec', 'rate48', 'flat48',
                                 'old', 'new')} | dict(pre=r.pre, post=r.post, raw=round(r.post - r.pre, 4),
               gain=uplift(r.pre, r.post, 'normalized', floor=-1.0), uplift_se=r.uplift_se, seconds=r.seconds)

def table(out:Path) -> str:
    "Verdicts that differ between installs, old and new, and what the trained specs gained by old verdict."
    import collections, statistics
    gates = [json.loads(l) for p in sorted(out.glob('gate*.jsonl')) for l in p.read_text().splitlines()]
    by = collections.defaultdict(dict)
    for g in gates: by[(g['family'], g['reward'], g['level'], g['temperature'])][g['install']] = g
    names = sorted({g['install'] for g in gates})
    full = {k: v for k, v in by.items() if len(v) == len(names)}
    short = {None: '.', 'SATURATED_NEVER': 'N', 'SATURATED_ALWAYS': 'A', 'SATURATED_GROUPS': 'G'}
    lines = [f"{len(full)} specs gated on all of installs {', '.join(names)} ('.' passed, N never, A always, "
             f"G groups): verdicts that differ between installs",
             f"  old gate: {sum(len({g['old'] for g in v.values()}) > 1 for v in full.values())}    new gate: "
             f"{sum(len({g['new'] for g in v.values()}) > 1 for v in full.values())}",
             f"  {'spec':38} {'old':>8} {'new':>8}  flat share of 48 groups, by install"]
    for k, v in sorted(full.items()):
        old, new = (''.join(short[v[n][w]] for n in names) for w in ('old', 'new'))
        if len(set(old)) > 1 or len(set(new)) > 1 or set(old) != set(new):
            lines.append(f"  {'-'.join(map(str, k)):38} {old:>8} {new:>8}  " +
                         ' '.join(f"{v[n]['flat48']:.2f}" for n in names))
    ext = [g for g in gates if 'could not tell' in g['message']]
    lines.append(f"  192 prompts sampled for {len(ext)} of {len(gates)} verdicts (median gate time "
                 f"{statistics.median(g['seconds'] for g in ext):.1f} s, others "
                 f"{statistics.median(g['seconds'] for g in gates if g not in ext):.1f} s)" if ext else '')
    tr = [json.loads(l) for p in sorted(out.glob('train*.jsonl')) for l in p.read_text().splitlines()]
    if tr:
        lines.append(f"\n{len(tr)} specs trained whatever the gates said (48-prompt flat share >= 0.75):")
        lines.append(f"  {'old verdict':18} {'n':>3} {'flat48':>11} {'raw gain':>17} {'normalised':>17}")
        for v in sorted({t['old'] or 'passed' for t in tr}):
            s = [t for t in tr if (t['old'] or 'passed') == v]
            f, r, n = ([t[x] for t in s] for x in ('flat48', 'raw', 'gain'))
            lines.append(f"  {v:18} {len(s):>3} {min(f):.2f}-{max(f):.2f} {statistics.mean(r):+.3f} "
                         f"[{min(r):+.3f},{max(r):+.3f}] {statistics.mean(n):.3f} [{min(n):.3f},{max(n):.3f}]")
    return '\n'.join(lines)

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--installs', default='a,b,c,d,e,f', help='secrets of results/installs/ to gate on')
    ap.add_argument('--train', default='', help='installs whose near-the-bar specs are trained (e.g. a,d)')
    ap.add_argument('--out', default='results/saturation', help='gate*.jsonl and train*.jsonl go here')
    ap.add_argument('--part', default='', help='a suffix for this process\'s files (two processes side by side)')
    ap.add_argument('--root', default='/tmp/agentforge-saturation', help='the installs\' data dirs and the specs')
    ap.add_argument('--table', metavar='DIR', help='only print the tables of DIR')
    a = ap.parse_args()
    if a.table: print(table(Path(a.table))); raise SystemExit
    out, root = Path(a.out), Path(a.root); out.mkdir(parents=True, exist_ok=True)
    gf, tf = out / f'gate{a.part}.jsonl', out / f'train{a.part}.jsonl'
    for name in [n for n in a.installs.split(',') if n]:
        done = {json.loads(l)['spec'] for l in gf.read_text().splitlines()} if gf.exists() else set()
        for r in gate_rows(name, root, root / 'specs', done):
            print(json.dumps(r), flush=True)
            with gf.open('a') as f: f.write(json.dumps(r) + '\n')
    if a.train:
        gates = [json.loads(l) for p in sorted(out.glob('gate*.jsonl')) for l in p.read_text().splitlines()]
        done = {json.loads(l)['spec'] for l in tf.read_text().splitlines()} if tf.exists() else set()
        for r in train_rows(gates, a.train.split(','), root, done):
            print(json.dumps(r), flush=True)
            with tf.open('a') as f: f.write(json.dumps(r) + '\n')
    print(table(out))
