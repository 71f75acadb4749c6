"""Would a weak agent base start low if the platform wrote the family's identity into its spec?

The retro `retros/2026-12-06-a-barely-cloned-agent-learned-five-names.md` left one idea open: let the platform write a
spec's `name`, `brief` and the family's rewards, so that a base cloned for few steps fails only on decisions every
family shares. This bench measures, without building it, what that would do to the first attempts of untrained bases:
each first `task.yaml` is probed as written and again with those three lines replaced by the brief's own (the reward
kind the agent chose is kept: `contains_answer` in its rewards means 'lenient').

Two sources of first specs:
  --runs RUN...        the step-0 episodes a `bench/outer.py` run recorded (`RUN/episodes/tiny-agent-s000-*.json`)
  --clone-steps 30,50  fresh untrained bases cloned for that many steps (`CloneRecipe(steps=N)`, built once, cached),
                       each playing phase 1 (agent and probe, no inner job) on every family x --seeds, at 0.7 (the
                       outer loop's temperature), one attempt (as the fixed evaluation plays them; a training
                       episode may retry after a refusal)
Probes only: no inner job is trained. Prints one line per source and writes --out (JSON). Asserts nothing.

Run (with the caches and data dir the runs used):
  .venv/bin/python bench/identity_given.py --runs runs/weak-base/clone-100/seed-{0,1,2} \\
      --clone-steps 30,50,60,70,85,100 --out results/outer/weak-base/identity-given.json    # ~5 minutes, two cores
"""
import argparse, collections, json, re, tempfile
from pathlib import Path


def first_spec(record:dict) -> str|None:
    "The task.yaml of an episode's first submission (no submission: the last one written; None: none written)."
    text = None
    for tc in (tc for t in record['turns'] for tc in t.get('tool_calls') or []):
        if tc['name'] == 'submit': return text
        if tc['name'] == 'write_file' and tc['arguments'].get('path') == 'task.yaml':
            text = tc['arguments'].get('content')
    return text


def identity_given(text:str, brief:str) -> str:
    "`text` with its name, brief and rewards lines as the scripted template (`agents.write_spec`) writes them."
    from agentforge.agents import write_spec
    template = write_spec(brief, dict(reward='lenient' if 'contains_answer' in text else 'strict'))
    for key in ('name', 'brief', 'rewards'):
        line = re.search(rf'^{key}: .*$', template, re.M)[0]
        text = re.sub(rf'^{key}: .*$', lambda _: line, text, count=1, flags=re.M)
    return text


def verdict(text:str|None, brief:str, root:Path) -> str:
    "The probe's verdict on `text` as a first submission for `brief`: 'VALID', its reason, or 'no spec'."
    from agentforge.landscape import _spec_folder
    from agentforge.probe import validate
    if text is None: return 'no spec'
    rep = validate(_spec_folder(root, brief, text), brief, attempt=1)
    if rep.infra(): raise RuntimeError(f'the probe could not judge a spec for {brief}: {rep.reason}')
    return 'VALID' if rep.validated else rep.reason


def rows_of(records:list, root:Path) -> list:
    "One row per episode: its brief, how it ended, the brief its first spec named, and both verdicts."
    out = []
    for r in records:
        spec = first_spec(r)
        named = re.search(r'^brief: (\S+)', spec or '', re.M)
        out.append(dict(brief=r['brief'], ended=r['ended'], named=named and named[1],
                        as_written=verdict(spec, r['brief'], root),
                        identity_given=verdict(spec and identity_given(spec, r['brief']), r['brief'], root)))
    return out


def played(steps:int, seeds:int) -> list:
    "Phase-1 episodes of a base cloned for `steps`, untrained, on every family x `seeds`, as JSON records."
    from agentforge.cloning import CloneRecipe, load_tiny_agent
    from agentforge.episode import Budgets, play_all
    from agentforge.families import FAMILIES
    agent = load_tiny_agent(CloneRecipe(steps=steps), progress=False, temperature=0.7)
    with tempfile.TemporaryDirectory(prefix='af-identity-') as w:
        eps = [(b, 1000 + s, Path(w) / f'{b}-{s}') for b in FAMILIES for s in range(seeds)]
        return [r.to_json() for r in play_all(agent, eps, budgets=Budgets(max_attempts=1))]


def summary(rows:list) -> dict:
    n = len(rows)
    return dict(episodes=n, valid_as_written=sum(r['as_written'] == 'VALID' for r in rows),
                valid_identity_given=sum(r['identity_given'] == 'VALID' for r in rows),
                named_own_brief=sum(r['named'] == r['brief'] for r in rows),
                as_written=dict(collections.Counter(r['as_written'] for r in rows)),
                identity_given=dict(collections.Counter(r['identity_given'] for r in rows)),
                ended=dict(collections.Counter(r['ended'] for r in rows)))


if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--runs', nargs='*', default=[], help="bench/outer.py run folders: their step-0 episodes")
    ap.add_argument('--clone-steps', default='', help='comma-separated CloneRecipe.steps to clone and play')
    ap.add_argument('--seeds', type=int, default=8, help='episodes per family for each --clone-steps base')
    ap.add_argument('--out', default='runs/identity-given.json')
    a = ap.parse_args()
    out, specs = {}, Path(tempfile.mkdtemp(prefix='af-identity-specs-'))
    sources = [(f'run {r}', lambda r=r: [json.loads(f.read_text()) for f in
                                         sorted(Path(r, 'episodes').glob('tiny-agent-s000-*.json'))]) for r in a.runs]
    sources += [(f'clone {n} steps', lambda n=n: played(n, a.seeds)) for n in map(int, filter(None,
                                                                                             a.clone_steps.split(',')))]
    for name, records in sources:
        rows = rows_of(records(), specs)
        out[name] = dict(summary=summary(rows), rows=rows)
        s = out[name]['summary']
        print(f"{name}: {s['episodes']} first attempts; valid as written {s['valid_as_written']}, with the identity "
              f"given {s['valid_identity_given']}; named their own brief {s['named_own_brief']}; "
              f"as written {s['as_written']}; given {s['identity_given']}", flush=True)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(out, indent=1))
    print('wrote', a.out)
