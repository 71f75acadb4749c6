"""Were broken tool calls paid? Recompute, from a finished run's training episodes, the advantage of every turn whose
call could not be parsed and that a later submission followed.

Each outer step's episodes on one brief are one GRPO group (lesson 11a). For each group this recomputes the turn
credit (`grpo.credit_segments`, `credit='turn'`) and the group advantages (`grpo.group_advantages`, the run's
`adv_scale`) with the code it runs on, and counts the unparsable turns before a submission whose advantage is above 0:
turns the update reinforced. Run on the code before `credit_segments` gave such a turn its own 0 to see what a run
paid (retros/2026-12-06-a-broken-call-was-paid-for-the-fix-after-it.md); on the current code every count is 0.

Run: .venv/bin/python bench/paid_breaks.py RUN [RUN ...]      (folders with episodes/ and config.yaml)
"""
import argparse, collections, json
from pathlib import Path

def paid_breaks(run:Path) -> dict:
    "{'broken': n, 'paid': n, 'paid_by_decade': {step // 10 * 10: n}} over the run's training episodes."
    import torch
    from agentforge.config import load_config
    from agentforge.episode import EpisodeRecord
    from agentforge.grpo import credit_segments, group_advantages
    groups = collections.defaultdict(list)
    for f in sorted((run / 'episodes').glob('*.json')):
        r = EpisodeRecord.from_json(json.loads(f.read_text()))
        if r.reward: groups[(r.step, r.brief)].append(r)
    scale, out = load_config(run).outer.adv_scale, dict(broken=0, paid=0, paid_by_decade=collections.Counter())
    for (step, _), recs in groups.items():
        segs = [credit_segments(r, 'turn') for r in recs]
        adv_U, u = group_advantages(torch.tensor([x for _, rs in segs for x in rs]), scale).tolist(), 0
        for r, (seg_T, rs) in zip(recs, segs):
            sent = {c['turn'] for c in r.tool_calls if c['name'] == 'submit'}
            for t, (turn, s) in enumerate(zip(r.turns, seg_T)):
                if turn.get('error') and t not in sent and sent:
                    out['broken'] += 1
                    if adv_U[u + s] > 0: out['paid'] += 1; out['paid_by_decade'][step // 10 * 10] += 1
            u += len(rs)
    return out

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('runs', nargs='+')
    for run in map(Path, ap.parse_args().runs):
        got = paid_breaks(run)
        print(f"{run}: {got['broken']} unparsable turns before a submission, {got['paid']} with an advantage above 0 "
              f"(by step decade: {dict(sorted(got['paid_by_decade'].items()))})", flush=True)
