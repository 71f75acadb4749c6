"""Does the agents' design space hold a spec that gains more than the landscape's best? The heuristic spec with the
longest run the design space allows (`agents.KNOBS`: 96 steps), alone, at 1e-3 (between the knobs' 3e-4 and 3e-3) and
with the hardest data (level 3), and one run twice as long again (192 steps, outside the agents' knobs but inside the
spec contract), each with several training seeds, graded like a landscape row (issue 11: the best gain >= 0.4).

The landscape (lesson 12b) trains the heuristic, the docs' example, random draws and the grid of steps and learning rate
the scripted agents vary (16 or 48 steps, level 2), so a longer or harder spec is not among its rows. Jobs go through
`bench/harmful.py`'s `train_candidates` (`landscape.evaluate_spec`: probe, inner job, result cache, reference
preset), so a repeat run reads the cache.
Prints one line per (brief, candidate, seed) and writes `--out`/ceiling.json. Asserts nothing.

Run: OMP_NUM_THREADS=1 .venv/bin/python bench/ceiling.py --briefs multihop_lookup --seeds 0,1,2 --out DIR
     (with a landscape's cache and data dir, so that its rows and these share one hidden split)
"""
import argparse, json
from pathlib import Path

CANDIDATES = {'96x3e-4': dict(max_steps=96), '96x1e-3': dict(max_steps=96, learning_rate='1.0e-3'),
              'L3x96x3e-4': dict(level=3, max_steps=96),
              '192x3e-4': dict(max_steps=192)}   # 192: outside agents.KNOBS, inside schema.GRPO_RANGES

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--briefs', default='multihop_lookup', help='comma-separated briefs')
    ap.add_argument('--seeds', default='0', help='comma-separated training seeds (the hidden split stays the same)')
    ap.add_argument('--out', default='runs/ceiling', help='ceiling.json and the spec folders go here')
    a = ap.parse_args()
    from agentforge.families import FAMILIES
    from harmful import train_candidates   # bench/ is on sys.path when this script runs
    briefs, seeds = a.briefs.split(','), [int(s) for s in a.seeds.split(',')]
    if unknown := set(briefs) - set(FAMILIES): ap.error(f"--briefs: no family {', '.join(sorted(unknown))}")
    out = Path(a.out)
    rows = train_candidates(briefs, list(CANDIDATES.items()), out / 'ceiling', seeds)
    out.mkdir(parents=True, exist_ok=True)
    (out / 'ceiling.json').write_text(json.dumps(dict(candidates=CANDIDATES, rows=rows), indent=1))
