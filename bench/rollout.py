"""Batched agent turns against one-at-a-time (issue 12, item 1): the first turns of one outer step's episodes.

The cloned tiny agent (built the first time: ~1.5 minutes) writes the first turn of `--groups` x `--group-size`
episodes (the outer step's shape: groups of episodes on the same brief), once with `act` one episode at a time
(batch 1, KV cache) and once with `act_batch` (one left-padded batch, one KV cache). Same seeds: the turns must be
identical, so the comparison is speed only. Prints tokens, seconds and tokens/s for each, side by side in one run.

Run: .venv/bin/python bench/rollout.py [--group-size 8 --groups 2 --threads 2]
Recorded: results/bench/rollout.json (with the machine's core count and load).
"""
import argparse, json, os, time
from pathlib import Path

def main(group_size:int, groups:int, threads:int, out:str|None):
    import torch
    torch.set_num_threads(threads)
    from agentforge.cloning import load_tiny_agent
    from agentforge.episode import brief_messages
    agent = load_tiny_agent(progress=True)
    briefs = ['arithmetic', 'date_math', 'string_ops', 'multihop_lookup', 'unit_conversion'][:groups]
    convs = [brief_messages(b) for b in briefs for _ in range(group_size)]
    seeds = list(range(len(convs)))
    agent.act_batch(convs[:2], [], seeds[:2])  # warm-up: first-call allocations out of the timing
    t = time.monotonic(); alone = [agent.act(c, [], s) for c, s in zip(convs, seeds)]; t_alone = time.monotonic() - t
    t = time.monotonic(); together = agent.act_batch(convs, [], seeds); t_batch = time.monotonic() - t
    same = [a.completion_ids == b.completion_ids for a, b in zip(alone, together)]
    tokens = sum(a.tokens for a in alone)
    res = dict(episodes=len(convs), group_size=group_size, groups=groups, threads=threads, cpus=os.cpu_count(),
               load=os.getloadavg()[0], tokens=tokens, identical_turns=f'{sum(same)}/{len(same)}',
               one_at_a_time=dict(seconds=round(t_alone, 2), tokens_per_s=round(tokens / t_alone, 1)),
               batched=dict(seconds=round(t_batch, 2), tokens_per_s=round(tokens / t_batch, 1)),
               speedup=round(t_alone / t_batch, 2))
    print(json.dumps(res, indent=1))
    if out: Path(out).parent.mkdir(parents=True, exist_ok=True); Path(out).write_text(json.dumps(res, indent=1) + '\n')

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--group-size', type=int, default=8, help='episodes per brief (the GRPO group)')
    ap.add_argument('--groups', type=int, default=2, help='briefs per step (at most 5)')
    ap.add_argument('--threads', type=int, default=2, help='torch threads')
    ap.add_argument('--out', default=None, help='write the result as JSON here too')
    a = ap.parse_args()
    main(a.group_size, a.groups, a.threads, a.out)
