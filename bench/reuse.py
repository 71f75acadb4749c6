"""What does reuse do? First-try validation and uplift on fresh episodes, with and without the library's examples.

1. Library pass: the random scripted writer plays --past-seeds episodes on every brief; each validated spec is trained
   (inner training seed 0) and recorded with its measured result in a fresh library.
2. Fresh pass: new episode seeds, every spec trained with inner seed 1 (so a reused spec is measured afresh, not
   credited with the number that made it best: the winner's curse), in these conditions:
   - scripted-random                 no examples
   - scripted-random+reuse (same)    CopyBest, examples from the same brief only
   - scripted-random+reuse (others)  CopyBest, examples from other briefs only (what transfers across families)
   - tiny / tiny+examples            the untrained tiny agent (cloned base), without and with examples offered (--tiny)
   - trained / trained+examples      an outer run's trained adapter (--adapter RUN), without and with examples
An episode that never validates trained nothing: its uplift is 0 (the student is unchanged) and it is counted. An
episode whose inner job died is ungraded: left out of the means, counted, and the run fails loudly if any did.

Reports first-try validation (Wilson 95% interval), mean raw uplift post - pre (t 95% interval over episodes), the
number of distinct specs trained (CopyBest writes one spec per brief, so its episodes repeat one training), the
library's uplift of the first example each brief was offered (to set beside the fresh one: the winner's curse), and each
condition against the one it extends brief by brief: the mean per-brief difference with a t interval over briefs,
the honest interval when episodes of a brief share their hidden eval and often their spec.

Run: .venv/bin/python bench/reuse.py --out results/reuse     (13 min on 2 cores once the student and agent base are built)
Recorded: results/reuse/reuse.json, read by lesson 09c_reuse; the trained agent's conditions:
    .venv/bin/python bench/reuse.py --no-scripted --adapter RUN --temperature 0.7 --out results/reuse/trained
"""
import argparse, json, math, statistics, sys, tempfile, time
from pathlib import Path

def wilson(k:int, n:int, z:float=1.96) -> list:
    "The Wilson score interval of k successes in n."
    if n == 0: return [0.0, 1.0]
    p, d = k / n, 1 + z * z / n
    c, h = (p + z * z / (2 * n)) / d, z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return [round(c - h, 4), round(c + h, 4)]

T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]

def t_interval(xs:list) -> list:
    "Mean +- t(0.975, n-1) standard errors (the t table for n-1 <= 30; 2.0 beyond, within 2% of the quantile)."
    if len(xs) < 2: return [float('nan'), float('nan')]
    m, se = statistics.fmean(xs), statistics.stdev(xs) / math.sqrt(len(xs))
    q = T975[len(xs) - 2] if len(xs) - 1 <= len(T975) else 2.0
    return [round(m - q * se, 4), round(m + q * se, 4)]

def summarise(name:str, records:list, lib_uplift:dict) -> dict:
    "One condition's figures from its episode records; `lib_uplift` is the library's uplift of each digest."
    graded = [r for r in records if r.reward]
    ups = [(r.inner['post'] - r.inner['pre']) if r.inner else 0.0 for r in graded]
    first = sum(r.validated_on == 1 for r in records)
    by_brief = {}
    for r, u in zip(graded, ups): by_brief.setdefault(r.brief, []).append(u)
    offered = {}  # the library's (inner seed 0) uplift of the first example offered, by brief: the winner's curse
    for r in records:
        if r.examples and lib_uplift.get(r.examples[0]) is not None:
            offered.setdefault(r.brief, []).append(lib_uplift[r.examples[0]])
    return dict(name=name, n=len(records), graded=len(graded), ungraded=len(records) - len(graded),
                validated=sum(bool(r.validated_on) for r in records), first_try=round(first / len(records), 4),
                first_try_ci=wilson(first, len(records)), uplift=round(statistics.fmean(ups), 4) if ups else None,
                uplift_ci=t_interval(ups), trained=sum(bool(r.inner) for r in graded),
                by_brief={b: round(statistics.fmean(v), 4) for b, v in sorted(by_brief.items())},
                best_example_library_uplift={b: round(statistics.fmean(v), 4) for b, v in sorted(offered.items())},
                specs=len({r.inner['key'] for r in graded if r.inner}),  # distinct trainings: CopyBest repeats one
                examples_offered=sum(bool(r.examples) for r in records),
                read_examples=sum(any(c['name'] == 'read_file' and str(c['arguments']).find('examples/') >= 0
                                      for c in r.tool_calls) for r in records))

def extends(name:str) -> str:
    "The condition `name` adds one thing to: examples to the same agent, training to the untrained agent."
    if name == 'trained + examples': return 'trained'
    return 'tiny (untrained)' if name.startswith(('tiny', 'trained')) else 'scripted-random'

def paired(conds:list) -> list:
    """Each condition against the one it extends, brief by brief (the episodes of one brief share its hidden eval and,
    under CopyBest, often one spec): the mean per-brief difference in uplift with a t interval over briefs."""
    base = {c['name']: c for c in conds}
    out = []
    for c in conds:
        ref = base.get(extends(c['name']))
        if ref is None or ref is c: continue
        briefs = sorted(set(c['by_brief']) & set(ref['by_brief']))
        d = [c['by_brief'][b] - ref['by_brief'][b] for b in briefs]
        out.append(dict(name=c['name'], against=ref['name'], briefs=len(d), uplift_diff=round(statistics.fmean(d), 4)
                        if d else None, uplift_diff_ci=t_interval(d), better_on=sum(x > 0 for x in d),
                        worse_on=sum(x < 0 for x in d), first_try_diff=round(c['first_try'] - ref['first_try'], 4)))
    return out

def main(a):
    from agentforge.agents import ScriptedAgent
    from agentforge.episode import run_episodes
    from agentforge.library import Library
    from agentforge.reuse import CopyBest
    briefs, work, t0 = a.briefs.split(','), Path(a.work or tempfile.mkdtemp(prefix='reuse-')), time.monotonic()
    lib = Library(work / 'library')
    past = run_episodes(ScriptedAgent('random'), [(b, s) for b in briefs for s in range(a.past_seeds)], work / 'past',
                        library=lib.root, seed=0, slots=a.slots)
    print(f"library: {len(lib.entries())} specs from {len(past)} episodes ({time.monotonic() - t0:.0f} s)", flush=True)
    lib_uplift = {e.digest: e.uplift for e in lib.entries()}
    fresh = [(b, s) for b in briefs for s in range(1000, 1000 + a.fresh_seeds)]
    conds = [('scripted-random', ScriptedAgent('random'), {}),
             ('scripted-random+reuse (same brief)', CopyBest(ScriptedAgent('random')), dict(reuse_scope='same')),
             ('scripted-random+reuse (other briefs)', CopyBest(ScriptedAgent('random')), dict(reuse_scope='others'))]
    if not a.scripted: conds = []
    temp = {} if a.temperature is None else dict(temperature=a.temperature)
    if a.tiny:
        from agentforge.cloning import load_tiny_agent
        tiny = load_tiny_agent(progress=False, **temp)
        conds += [('tiny (untrained)', tiny, {}), ('tiny (untrained) + examples', tiny, dict(reuse_scope='any'))]
    if a.adapter:
        from agentforge.cloning import load_tiny_agent
        from agentforge.practice import _adapter_dir  # the one reader of a run's checkpoints (`draft --agent adapter:`)
        trained = load_tiny_agent(adapter=_adapter_dir(a.adapter), progress=False, name='trained', **temp)
        conds += [('trained', trained, {}), ('trained + examples', trained, dict(reuse_scope='any'))]
    out = dict(briefs=briefs, past_seeds=a.past_seeds, fresh_seeds=a.fresh_seeds, library_specs=len(lib.entries()),
               library_inner_seed=0, fresh_inner_seed=1, adapter=a.adapter, temperature=a.temperature, conditions=[])
    for i, (name, agent, kw) in enumerate(conds):
        t = time.monotonic()
        recs = run_episodes(agent, fresh, work / f'fresh-{i}', tag=f'c{i}', seed=1, slots=a.slots,
                            reuse=lib.root if kw else None, **kw)
        s = summarise(name, recs, lib_uplift) | dict(seconds=round(time.monotonic() - t, 1))
        out['conditions'].append(s)
        print(json.dumps(s), flush=True)
        out['paired'] = paired(out['conditions'])
        Path(a.out).mkdir(parents=True, exist_ok=True)
        total = dict(seconds=round(time.monotonic() - t0, 1))
        (Path(a.out) / 'reuse.json').write_text(json.dumps(out | total, indent=1))
    bad = sum(c['ungraded'] for c in out['conditions'])
    if bad: sys.exit(f"{bad} episode(s) ungraded (inner job died): the means above leave them out")

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--briefs', default='arithmetic,date_math,string_ops,unit_conversion,customer_support')
    ap.add_argument('--past-seeds', type=int, default=4, help='library-pass episodes per brief')
    ap.add_argument('--fresh-seeds', type=int, default=4, help='fresh episodes per brief and condition')
    ap.add_argument('--tiny', action=argparse.BooleanOptionalAction, default=True, help='also the untrained tiny agent')
    ap.add_argument('--scripted', action=argparse.BooleanOptionalAction, default=True,
                    help='the scripted conditions (random, and CopyBest with same-brief and other-brief examples)')
    ap.add_argument('--adapter', default=None, help='also a trained agent: an outer run folder (its newest verified '
                    'checkpoint) or RUN/checkpoints/step-N')
    ap.add_argument('--temperature', type=float, default=None,
                    help="the tiny and trained agents' sampling temperature (default: the tiny agent's own)")
    ap.add_argument('--slots', type=int, default=2, help='inner jobs at once')
    ap.add_argument('--out', default='results/reuse', help='reuse.json goes here')
    ap.add_argument('--work', default=None, help='episodes, pool and library (default: a temp folder)')
    main(ap.parse_args())
