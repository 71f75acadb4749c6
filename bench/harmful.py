"""Which valid spec harms the student? The heuristic spec with one reckless change or two, trained on every family and
graded like a landscape row (lesson 12b's `harmful` kind; issue 11: a harmful spec must score below a lazy one).

Each candidate is `agents.HEURISTIC` with the changes named in CANDIDATES (`rewards`: the spec's rewards list, as flow
YAML, instead of the family's); `lazy` is `landscape.LAZY`, for comparison.
Jobs go through `landscape.evaluate_spec` (probe, inner job, result cache, reference preset), so a candidate the
landscape or the demo already trained is read from the cache. Prints one line per (brief, candidate) and writes
`--out`/harmful-candidates.json. Asserts nothing. `--only A,B` runs those candidates (and the lazy spec) only.

Run: .venv/bin/python bench/harmful.py --out results/landscape-7200-steps   (with the landscape's cache and data dir:
     42 specs, ~25 of them new, ~10 minutes on two cores)
"""
import argparse, json, re
from pathlib import Path

CANDIDATES = {'48x3e-3': dict(learning_rate='3.0e-3'), '96x3e-3': dict(max_steps=96, learning_rate='3.0e-3'),
              '96x3e-3xT1.3': dict(max_steps=96, learning_rate='3.0e-3', temperature=1.3),
              'L3x48x3e-3': dict(level=3, learning_rate='3.0e-3'),
              'L3x96x3e-3': dict(level=3, max_steps=96, learning_rate='3.0e-3'),
              '48x1e-2': dict(learning_rate='1.0e-2'),   # the contract's largest learning rate (schema.GRPO_RANGES)
              '96x1e-2': dict(max_steps=96, learning_rate='1.0e-2'),   # twice as long at it
              'L1x96x1e-2': dict(level=1, max_steps=96, learning_rate='1.0e-2'),   # and only the easiest data
              '48x3e-2': dict(learning_rate='3.0e-2'),   # above it: the probe refuses it
              # a reward that pays the habit: any completion containing the answer (chatter around it included)
              'contains-only': dict(rewards='[{use: contains_answer, weight: 1.0}]'),
              # a reward that also pays long answers (agents._rewards 'verbose'): landscape.HARMFUL since 2026-12-06
              'verbose-96x1e-2': dict(reward='verbose', max_steps=96, learning_rate='1.0e-2'),
              'verbose-48x3e-4': dict(reward='verbose'),   # the same reward at the heuristic's step: is it the reward?
              'L3x96x1e-2': dict(level=3, max_steps=96, learning_rate='1.0e-2'),
              'T1.3x96x1e-2': dict(max_steps=96, learning_rate='1.0e-2', temperature=1.3)}

def train_candidates(briefs:list, cands:list, folder:Path, seeds=(0,)) -> list:
    """Train `agents.HEURISTIC` with each candidate's changes (`rewards`: flow YAML replacing the family's) on each
    brief and seed, graded like a landscape row; print one line each and return the rows (`bench/ceiling.py` too)."""
    from agentforge.agents import HEURISTIC, write_spec
    from agentforge.landscape import _spec_folder, evaluate_spec
    rows = []
    for brief in briefs:
        for name, change in cands:
            knobs = dict(change)
            rewards = knobs.pop('rewards', None)
            spec = write_spec(brief, dict(HEURISTIC, **knobs))
            if rewards: spec = re.sub(r'^rewards: .*$', f'rewards: {rewards}', spec, count=1, flags=re.M)
            for seed in seeds:
                r = evaluate_spec(_spec_folder(folder, brief, spec), brief, seed=seed)
                rows.append(dict(brief=brief, cand=name, seed=seed, **{k: r.get(k) for k in (
                    'validated', 'reason', 'pre', 'post', 'gain', 'gain_se', 'raw', 'reward', 'train_seconds')}))
                g = r.get('gain')
                print(f"{brief:17} {name:15} seed {seed} " + (f"gain {g:+.3f} (SE {r['gain_se']:.3f}) reward "
                      f"{r['reward']:.3f} train {r['train_seconds']:.0f} s" if g is not None
                      else f"not valid: {r['reason']}"), flush=True)
    return rows

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--briefs', default=None, help='comma-separated briefs (default: every family)')
    ap.add_argument('--out', default='runs/harmful', help='harmful-candidates.json and the spec folders go here')
    ap.add_argument('--only', default=None, help='comma-separated candidate names (default: all; lazy always runs)')
    a = ap.parse_args()
    if a.only and (unknown := set(a.only.split(',')) - set(CANDIDATES)):
        ap.error(f"--only: no candidate {', '.join(sorted(unknown))}; the candidates are {', '.join(CANDIDATES)}")
    from agentforge.families import FAMILIES
    from agentforge.landscape import LAZY
    out = Path(a.out)
    cands = [('lazy', LAZY), *((k, v) for k, v in CANDIDATES.items() if not a.only or k in a.only.split(','))]
    rows = train_candidates(a.briefs.split(',') if a.briefs else list(FAMILIES), cands, out / 'harmful')
    (out / 'harmful-candidates.json').write_text(json.dumps(dict(candidates=CANDIDATES, rows=rows), indent=1))
