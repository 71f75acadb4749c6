"""Would TRL's `mask_truncated_completions` let a spec cut at the answer teach? (lesson 12b, "What the reward cannot see")

`completion_length: answer` cuts a habitual completion right after a long answer, so the strict matcher pays it in
full (results/knobs/completion-length/). TRL can drop truncated completions from the loss (DAPO's overlong
filtering). It is not a spec field, so this bench patches it into `inner.grpo_args` in its own process and trains the
heuristic at `completion_length` OPTION with four training seeds, caching results under --cache (the inner-result
key does not know the flag: never share that cache with unpatched runs).

Run: AGENTFORGE_DATA_DIR=... OMP_NUM_THREADS=1 .venv/bin/python bench/mask_truncated.py --briefs date_math,arithmetic
Prints one JSON row per job (gain normalised, kinds: greedy post per kind of item); asserts nothing.
Recorded: results/knobs/completion-length/mask-truncated.jsonl.
"""
import argparse, json, tempfile
from pathlib import Path
import agentforge.inner as inner
from agentforge.agents import KNOBS, write_spec
from agentforge.grading import uplift
from agentforge.landscape import _spec_folder

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--briefs', default='date_math,arithmetic', help='comma-separated briefs')
    ap.add_argument('--option', default='answer', choices=KNOBS['completion_length'], help='the completion_length')
    ap.add_argument('--seeds', type=int, default=4, help='training seeds 0 .. SEEDS-1')
    ap.add_argument('--cache', default=None, help='inner-result cache for these patched jobs (default: a temp folder)')
    a = ap.parse_args()
    cache, work = Path(a.cache or tempfile.mkdtemp(prefix='mask-cache-')), Path(tempfile.mkdtemp(prefix='mask-specs-'))
    plain = inner.grpo_args
    inner.grpo_args = lambda *args, **kw: {**plain(*args, **kw), 'mask_truncated_completions': True}
    for b in [b for b in a.briefs.split(',') if b]:
        folder = _spec_folder(work, b, write_spec(b, dict(completion_length=a.option)))
        for s in range(a.seeds):
            r = inner.run_inner(folder, seed=s, cache_root=cache)
            print(json.dumps(dict(brief=b, option=a.option, seed=s, mask_truncated_completions=True, pre=r.pre,
                                  post=r.post, gain=uplift(r.pre, r.post, 'normalized', floor=-1.0),
                                  train_seconds=r.train_seconds, kinds=r.kinds)), flush=True)
