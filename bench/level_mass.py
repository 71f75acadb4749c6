"""How much of the policy's probability still writes a level where the spec's level goes? Read finished runs' last
adapter by teacher forcing.

For each run folder (its last checkpoint under `checkpoints/`), every family's cloned write-and-submit turn (lesson
11's `_turn_ids`, the heuristic's choices) is fed to the trained agent, and at the position after `level: ` the
probability of the three level tokens (`1`, `2`, `3`) is summed at the run's sampling temperature. 1.000 means the
turn can only go on as a spec; less is the share of samples that write something else there, which the probe then
refuses (`level` is required). The policy probe (lesson 11) cannot show this: it normalises over the options.

Run: .venv/bin/python bench/level_mass.py RUN [RUN ...]            (a default agent base)
     .venv/bin/python bench/level_mass.py --joint RUN [RUN ...]    (bases cloned with CloneRecipe(joint=True))
     with the run's AGENTFORGE_CACHE_DIR, where its agent base is cached
"""
import argparse
from pathlib import Path

def level_mass(run:Path, joint:bool=False) -> dict:
    "{brief: P(a level token) after `level: `} for the last checkpoint of `run`."
    import torch
    from agentforge import outer
    from agentforge.cloning import CloneRecipe, load_tiny_agent
    from agentforge.config import load_config
    from agentforge.durable import latest_checkpoint
    last = latest_checkpoint(run / 'checkpoints')  # the newest whose manifest verifies
    agent = load_tiny_agent(CloneRecipe(joint=joint), adapter=str(last / 'adapter'), progress=False)
    cfg, out = load_config(run), {}
    agent.model.eval()
    for brief in [*cfg.outer.families, cfg.holdout]:
        p, c = outer._turn_ids(agent, brief, {})
        c1 = outer._turn_ids(agent, brief, {'level': 1})[1]
        at = len(p) + next(i for i, (a, b) in enumerate(zip(c, c1)) if a != b) - 1  # the position that writes the level
        with torch.no_grad():
            lp_T = torch.log_softmax(agent.model(torch.tensor([p + c])).logits[0].float() / cfg.temperature, -1)
        out[brief] = sum(lp_T[at, agent.tok.convert_tokens_to_ids(x)].exp().item() for x in '123')
    return out

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--joint', action='store_true',
                    help='the runs used an agent base cloned with joint=True (without: joint=False, the '
                         'default before 2026-12-06)')
    ap.add_argument('runs', nargs='+')
    a = ap.parse_args()
    for run in map(Path, a.runs):
        got = level_mass(run, a.joint)
        print(f'{run}: ' + ', '.join(f'{b} {v:.3f}' for b, v in got.items()), flush=True)
