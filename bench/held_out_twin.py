"""Whose decision does the held-out family get? Read finished runs' last policy probe and compare.

For each run folder (its `metrics.jsonl` and `config.yaml`), the policy probe of the last step (lesson 11: each
knob's option probabilities by teacher forcing, per family) gives each family's most likely decision: level, steps
and learning rate. The held-out family is never trained on, so its decision is whatever the shared tokens carry
over from the trained families. This prints, per run, the held-out decision, each trained family's, and which
trained families decide exactly as the held-out one does (all three knobs); then, over all runs, how often each
trained family was such a twin, and how often the held-out decision matched no trained family.

Run: .venv/bin/python bench/held_out_twin.py results/outer/*/seed-* results/outer/*/*/seed-* results/*-demo-*
     (folders without policy rows are listed and skipped)
"""
import argparse, collections
from pathlib import Path

KNOBS = ('level', 'max_steps', 'learning_rate')

def decisions(run:Path) -> tuple:
    "(held-out brief, {brief: (level, steps, lr)}) from the run's last metrics row with a policy, or None."
    from agentforge.config import load_config
    from agentforge.outer import read_metrics
    pol = next((r['policy'] for r in reversed(read_metrics(run)) if r.get('policy')), None)
    if not pol: return None
    return load_config(run).holdout, {b: tuple(max(p[k], key=p[k].get) for k in KNOBS) for b, p in pol.items()}

def main(folders:list) -> dict:
    twins, only, pairs, n, alone = collections.Counter(), collections.Counter(), collections.Counter(), 0, 0
    for run in map(Path, folders):
        got = (run / 'metrics.jsonl').exists() and decisions(run)
        if not got:
            print(f'{run}: no policy rows, skipped')
            continue
        held, dec = got
        same = [b for b, d in dec.items() if b != held and d == dec[held]]
        n, alone = n + 1, alone + (not same)
        twins.update(same)
        if len(same) == 1: only[same[0]] += 1
        pairs.update((a, b) for a in dec for b in dec if a < b and dec[a] == dec[b])
        show = lambda d: f'level {d[0]}, {d[1]} steps at {d[2]}'
        print(f"{run}: held out {held} decides {show(dec[held])}; the same on: {', '.join(same) or 'no trained family'}")
        print('    ' + '; '.join(f'{b} {show(d)}' for b, d in dec.items() if b != held))
    print(f'\n{n} runs. The held-out decision equals a trained family\'s (all three knobs):')
    for b, k in twins.most_common(): print(f'  {b}: {k} of {n}')
    print(f'  no trained family: {alone} of {n}')
    print('The only trained family with that decision: ' + ', '.join(f'{b} {k}' for b, k in only.most_common()))
    trained = sorted({b for ab in pairs for b in ab} - {held})
    print('For comparison, two trained families deciding alike (all three knobs), of the same runs:')
    for (a, b), k in sorted(((ab, k) for ab, k in pairs.items() if held not in ab), key=lambda x: -x[1]):
        print(f'  {a} and {b}: {k} of {n}')
    return dict(runs=n, twins=dict(twins), only=dict(only), alone=alone,
                trained_pairs={f'{a}+{b}': k for (a, b), k in pairs.items() if held not in (a, b)})

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('runs', nargs='+', help='run folders (metrics.jsonl with policy rows, config.yaml)')
    main(ap.parse_args().runs)
