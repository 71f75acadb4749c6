"""After the probe refuses a spec written for another brief (BRIEF_MISMATCH), does the agent fix it?

The slip a trained agent makes on a family it never trained on is to write a training family's spec: in the two
2026-12-05 runs that offered the larger student, 4 of the 7 held-out transfer episodes that never validated began with
one, and the turn after the probe's answer was unusable. This bench plays, on every family, a first turn that writes
another brief's spec and submits it (the real workspace and probe: `ScriptedAgent(slip_rate=1)`), then samples the agent
base's next turn on that exact transcript and counts what it did:

- `fixed`: a parsable write_file of a task.yaml whose `brief:` is the episode's and that the probe validates;
- `wrong_brief`: a parsable spec that answers another brief again;
- `invalid`: a parsable spec the probe refuses for another reason;
- `unusable`: no usable tool call, or no task.yaml written.

Run: .venv/bin/python bench/recovery.py --per-family 16 --out results/agent/recovery-<label>.json
"""
import argparse, json, re, sys, tempfile, time
from pathlib import Path


def slipped(family:str, seed:int, work:Path) -> list:
    "The transcript after a first turn that wrote another brief's spec and was refused (real workspace and probe)."
    from agentforge.agents import ScriptedAgent
    from agentforge.episode import Budgets, play
    rec = play(ScriptedAgent('random', slip_rate=1.0, explore_rate=0.0, give_up_rate=0.0), family, seed, work,
               saturation=False, budgets=Budgets(max_turns=1))
    assert [p['reason'] for p in rec.probe_reports] == ['BRIEF_MISMATCH'], rec.probe_reports
    return rec.messages


def outcome(turn, family:str, work:Path) -> str:
    "What the turn after the refusal did (see the module docstring)."
    from agentforge.probe import validate
    writes = [c for c in turn.tool_calls if c.name == 'write_file' and c.arguments.get('path') == 'task.yaml']
    if not writes or not isinstance(writes[-1].arguments.get('content'), str): return 'unusable'
    text = writes[-1].arguments['content']
    m = re.search(r'^brief: (\w+)$', text, re.M)
    if m is None or m[1] != family: return 'wrong_brief' if m else 'invalid'
    work.mkdir(parents=True, exist_ok=True)
    (work / 'task.yaml').write_text(text)
    return 'fixed' if validate(work, brief=family, saturation=False).validated else 'invalid'


if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--per-family', type=int, default=16, help='slipped transcripts per family')
    ap.add_argument('--temperature', type=float, default=0.7, help="the agent's sampling temperature (the demo's)")
    ap.add_argument('--out', default=None, help='write the JSON here')
    a = ap.parse_args()
    from agentforge.cloning import CloneRecipe, load_tiny_agent
    from agentforge.families import FAMILIES
    from agentforge.workspace import TOOL_SCHEMAS
    t0, work = time.monotonic(), Path(tempfile.mkdtemp(prefix='af-recovery-'))
    agent = load_tiny_agent(progress=False, temperature=a.temperature)
    res = {}
    for f in FAMILIES:
        convs = [slipped(f, s, work / f'{f}-{s}') for s in range(a.per_family)]
        turns = agent.act_batch(convs, TOOL_SCHEMAS, [10_000 + s for s in range(a.per_family)])
        outs = [outcome(t, f, work / f'{f}-{s}-fix') for s, t in enumerate(turns)]
        res[f] = {k: outs.count(k) for k in ('fixed', 'wrong_brief', 'invalid', 'unusable')}
        print(f, res[f], file=sys.stderr)
    n = a.per_family * len(FAMILIES)
    out = dict(clone=CloneRecipe().key(), per_family=a.per_family, temperature=a.temperature, families=res,
               fixed_share=round(sum(r['fixed'] for r in res.values()) / n, 3), seconds=round(time.monotonic() - t0, 1))
    print(json.dumps(out, indent=1))
    if a.out: Path(a.out).write_text(json.dumps(out, indent=1) + '\n')
