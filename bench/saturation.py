"""The probe's saturation gate across installs: which specs does it refuse, and do its refusals hold up when trained?

Each install is an empty data dir holding one of `results/installs/<x>.secret.key`, so its hidden splits, its training
rows and the 48 rows the gate samples are that install's (retro 2026-12-07-two-installs-two-demos). On every family,
every spec of the scripted space that the gate can tell apart (the rewards x level x temperature of `agents.KNOBS`,
the heuristic otherwise: 108 specs) is gated twice on the same rows:
- `old`: the gate before 2026-12-07: 48 prompts x 8, each share's point estimate against its bar;
- `new`: `probe.check_saturation` as it is (refused only past a bar by two standard errors, measured over prompts
  where that is larger; 192 prompts where 48 cannot tell; still too near: passed as borderline; already solved
  counts full credit). `--before DIR` adds an earlier record's `new` verdicts to the table (`before`).
Each row also carries the 48-prompt shares: pass rate, full-credit share, flat groups, and their SEs over prompts.
`--train X,Y` then trains, on installs X and Y, every spec within reach of a bar with `inner.run_inner` whatever
either gate said, and scores it greedily on the hidden split (lesson 12b's protocol): does a refused spec learn less?
`--near groups` (the default): 48-prompt flat share >= 0.75 and pass rate >= 2%; `--near always`: pass rate >= 95%.
`--family`, `--reward`, `--level`, `--temperature` change the gated space (e.g. `--temperature 0.1,0.3,0.5`, outside
`agents.KNOBS`, where groups are flatter than the scripted space ever makes them).
Writes `--out`/gate.jsonl and `--out`/train.jsonl (resumable: rows already there are kept) and prints the tables.
Asserts nothing.

Run: .venv/bin/python bench/saturation.py --installs a,b,c --out results/saturation/full-credit &
     .venv/bin/python bench/saturation.py --installs d,e,f --out results/saturation/full-credit --part=2; wait
     .venv/bin/python bench/saturation.py --installs '' --train c,f --near always --part=-always --out DIR
     (about 11 minutes a process for the gates on two cores, then 13-36 s an inner job;
     the tables: --table DIR [--before results/saturation])
Recorded: results/saturation/ (its README), lesson 06.
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

SPACE = dict(family=FAMILIES, reward=('strict', 'lenient'), level=(1, 2, 3), temperature=(0.7, 1.0, 1.3))

def gate_rows(name:str, root:Path, work:Path, done:set, space:dict=SPACE):
    "Yield one row per spec of install `name`: both verdicts on the same first 48 prompts, and the new one's message."
    from agentforge import probe
    from agentforge.agents import write_spec
    from agentforge.rows import load_rows
    from agentforge.schema import load_spec
    data = install(name, root)
    for fam, rw, lv, T in itertools.product(*(space[k] for k in SPACE)):
        d = work / name / f'{fam}-{rw}-{lv}-{T}'
        if str(d) in done: continue
        d.mkdir(parents=True, exist_ok=True)
        (d / 'task.yaml').write_text(write_spec(fam, dict(reward=rw, level=lv, temperature=T)))
        spec = load_spec(d); rows = load_rows(spec, hidden_root=data)
        sub = probe._gate_rows(rows)[0]   # the gate's first 48 rows
        G = min(probe.SAT_GROUP, spec.grpo['num_generations'])
        s = probe._shares(probe._sampled_totals(spec, sub, G, 0, None), G)   # the gate's first stage
        t0 = time.monotonic(); c = probe.check_saturation(spec, rows, None, cache=False)
        yield dict(install=name, family=fam, reward=rw, level=lv, temperature=T, spec=str(d), rate48=s.passed,
                   full48=s.full, flat48=s.flat, rate_se48=s.passed_se, full_se48=s.full_se,
                   old=old_verdict(s.passed, s.flat), new=c.code, message=c.message,
                   seconds=round(time.monotonic() - t0, 2))

NEAR = dict(groups=lambda g: g['flat48'] >= 0.75 and g['rate48'] >= 0.02,  # within reach of the 90% flat bar
            always=lambda g: g['rate48'] >= 0.95)                         # of the 98% pass-rate bar

def train_rows(gates:list, installs:list, root:Path, done:set, near:str='groups'):
    "Yield one row per near-the-bar spec of `installs`, trained once (seed 0) and scored greedily on the hidden split."
    from agentforge.grading import uplift
    from agentforge.inner import run_inner
    for g in gates:
        if g['install'] not in installs or not NEAR[near](g) or g['spec'] in done: continue
        r = run_inner(g['spec'], 'tiny-student', 0, hidden_root=install(g['install'], root))
        yield {k: g[k] for k in ('install', 'family', 'reward', 'level', 'temperature', 'spec', 'rate48', 'flat48',
                                 'old', 'new')} | dict(pre=r.pre, post=r.post, raw=round(r.post - r.pre, 4),
               gain=uplift(r.pre, r.post, 'normalized', floor=-1.0), uplift_se=r.uplift_se, seconds=r.seconds,
               flat_train=r.metrics.get('frac_reward_zero_std', {}).get('mean'))   # flat groups while training

def _read(d:Path|None, kind:str) -> list:
    return [json.loads(l) for p in sorted(d.glob(f'{kind}*.jsonl')) for l in p.read_text().splitlines()] if d else []

def table(out:Path, before:Path|None=None) -> str:
    """Verdicts that differ between installs or gates: `old` (before 2026-12-07), `before`'s `new` where given, and
    `out`'s `new`; then what the specs trained whatever the gates said gained, grouped by those verdicts."""
    import collections, statistics
    gates, prev = _read(out, 'gate'), {g['spec']: g['new'] for g in _read(before, 'gate')}
    for g in gates: g['before'] = prev.get(g['spec'], '?')
    cols = ('old', 'before', 'new') if prev else ('old', 'new')
    by = collections.defaultdict(dict)
    for g in gates: by[(g['family'], g['reward'], g['level'], g['temperature'])][g['install']] = g
    names = sorted({g['install'] for g in gates})
    full = {k: v for k, v in by.items() if len(v) == len(names)}
    short = {None: '.', 'SATURATED_NEVER': 'N', 'SATURATED_ALWAYS': 'A', 'SATURATED_GROUPS': 'G', '?': '?'}
    differ = lambda v, w: len({g[w] for g in v.values()}) > 1
    lines = [f"{len(full)} specs gated on all of installs {', '.join(names)} ('.' passed, N never, A always, "
             f"G groups): verdicts that differ between installs",
             '  ' + '    '.join(f"{w} gate: {sum(differ(v, w) for v in full.values())}" for w in cols),
             f"  {'spec':38} " + ' '.join(f'{w:>8}' for w in cols) + "  pass / full-credit / flat share of 48, by install"]
    for k, v in sorted(full.items()):
        vs = [''.join(short[v[n][w]] for n in names) for w in cols]
        if any(len(set(x)) > 1 for x in vs) or len({frozenset(x) for x in vs}) > 1:
            lines.append(f"  {'-'.join(map(str, k)):38} " + ' '.join(f'{x:>8}' for x in vs) + '  ' +
                         ' '.join(f"{v[n]['rate48']:.2f}/{v[n].get('full48', float('nan')):.2f}/{v[n]['flat48']:.2f}"
                                  for n in names))
    ext = [g for g in gates if 'could not tell' in g['message']]
    lines.append(f"  192 prompts sampled for {len(ext)} of {len(gates)} verdicts (median gate time "
                 f"{statistics.median(g['seconds'] for g in ext):.1f} s, others "
                 f"{statistics.median(g['seconds'] for g in gates if g not in ext):.1f} s)" if ext else '')
    now = {g['spec']: g for g in gates}
    tr = [t | {'before': prev.get(t['spec'], t['new']), 'new': now[t['spec']]['new']} if t['spec'] in now else t
          for t in _read(before, 'train') + _read(out, 'train')]
    if tr:
        lines.append(f"\n{len(tr)} specs trained whatever the gates said, by verdict ({'/'.join(cols)}):")
        lines.append(f"  {'verdicts':10} {'n':>3} {'pass48':>11} {'flat48':>11} {'raw gain':>17} {'normalised':>17}")
        key = lambda t: '/'.join(short[t.get(w, '?')] for w in cols)
        for v in sorted({key(t) for t in tr}):
            s = [t for t in tr if key(t) == v]
            p, f, r, n = ([t[x] for t in s] for x in ('rate48', 'flat48', 'raw', 'gain'))
            lines.append(f"  {v:10} {len(s):>3} {min(p):.2f}-{max(p):.2f} {min(f):.2f}-{max(f):.2f} "
                         f"{statistics.mean(r):+.3f} [{min(r):+.3f},{max(r):+.3f}] "
                         f"{statistics.mean(n):.3f} [{min(n):.3f},{max(n):.3f}]")
    return '\n'.join(lines)

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--installs', default='a,b,c,d,e,f', help='secrets of results/installs/ to gate on')
    ap.add_argument('--train', default='', help='installs whose near-the-bar specs are trained (e.g. a,d)')
    ap.add_argument('--near', choices=NEAR, default='groups', help="which bar's neighbours --train trains: the flat-"
                    "groups bar's (flat share of 48 >= 0.75, pass rate >= 2%%) or the pass-rate bar's (>= 95%%)")
    ap.add_argument('--out', default='results/saturation', help='gate*.jsonl and train*.jsonl go here')
    ap.add_argument('--part', default='', help='a suffix for this process\'s files (two processes side by side)')
    ap.add_argument('--root', default='/tmp/agentforge-saturation', help='the installs\' data dirs and the specs')
    ap.add_argument('--table', metavar='DIR', help='only print the tables of DIR')
    ap.add_argument('--before', metavar='DIR', help="an earlier record: its gate's verdicts in the table too")
    for k, v in SPACE.items():
        ap.add_argument(f'--{k}', default=','.join(map(str, v)), help=f'the gated specs\' {k} values (default: %(default)s)')
    a = ap.parse_args()
    space = dict(family=a.family.split(','), reward=a.reward.split(','), level=[int(x) for x in a.level.split(',')],
                 temperature=[float(x) for x in a.temperature.split(',')])
    before = Path(a.before) if a.before else None
    if a.table: print(table(Path(a.table), before)); raise SystemExit
    out, root = Path(a.out), Path(a.root); out.mkdir(parents=True, exist_ok=True)
    gf, tf = out / f'gate{a.part}.jsonl', out / f'train{a.part}.jsonl'
    for name in [n for n in a.installs.split(',') if n]:
        done = {json.loads(l)['spec'] for l in gf.read_text().splitlines()} if gf.exists() else set()
        for r in gate_rows(name, root, root / 'specs', done, space):
            print(json.dumps(r), flush=True)
            with gf.open('a') as f: f.write(json.dumps(r) + '\n')
    if a.train:
        gates = _read(out, 'gate')
        done = {json.loads(l)['spec'] for l in tf.read_text().splitlines()} if tf.exists() else set()
        for r in train_rows(gates, a.train.split(','), root, done, a.near):
            print(json.dumps(r), flush=True)
            with tf.open('a') as f: f.write(json.dumps(r) + '\n')
    print(table(out, before))
