"""Where does the larger student's edge come from: the extra layer, or the extra pretraining? (lesson 03b)

Three students, each measured on every family's dev split: greedy as trained, and greedy with the habit removed
(`student.CHATTER` cut from each completion: what a spec that removes the habit can reach at most), plus T = 1 mean
and pass@8 (`student.dev_profile`):
  small   the tiny student as built (`StudentRecipe()`);
  large   `student.LARGE`: the small one grown one layer (`student.grow`) and pretrained 1,000 more steps;
  longer  the same 1,000 steps on the same rows without the extra layer (`LARGE` with `extra_layers=0`).
Builds go to a temp cache (the small one is linked from yours when it is built). Writes --out/grow.json.

Run: .venv/bin/python bench/student_grow.py --out results/student   (about 5 minutes on two cores)
"""
import argparse, dataclasses, json, os, tempfile, time
from pathlib import Path

def capability(model, tok) -> dict:
    from agentforge.families import FAMILIES, get_family
    from agentforge.student import CHATTER, complete, dev_profile
    from agentforge.tasks import dev_split
    prof, out = dev_profile(model, tok, k=8), {}
    for n in FAMILIES:
        fam, items = get_family(n), dev_split(get_family(n))
        comps = complete(model, tok, [i.prompt for i in items], temperature=0)
        no_habit = sum(fam.score(c.replace(CHATTER, ''), i.answer, **i.meta) for c, i in zip(comps, items)) / len(items)
        out[n] = dict(prof[n], greedy_no_habit=round(no_habit, 4))
    return out

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--out', default='results/student', help='grow.json goes here')
    a = ap.parse_args()
    from agentforge.tasks import cache_dir
    mine = cache_dir() / 'students'
    root = Path(tempfile.mkdtemp(prefix='grow-'))
    (root / 'students').mkdir()
    from agentforge.student import LARGE, StudentRecipe, build_student
    small = StudentRecipe()
    if (mine / small.key()).is_dir(): (root / 'students' / small.key()).symlink_to(mine / small.key())
    os.environ['AGENTFORGE_CACHE_DIR'] = str(root)
    from transformers import AutoModelForCausalLM, AutoTokenizer
    res = {}
    for name, recipe in (('small', small), ('large', LARGE), ('longer', dataclasses.replace(LARGE, extra_layers=0))):
        t = time.monotonic()
        folder = build_student(recipe, progress=False, root=root)
        built = round(time.monotonic() - t, 1)
        man = json.loads((folder / 'manifest.json').read_text())
        model, tok = AutoModelForCausalLM.from_pretrained(folder).eval(), AutoTokenizer.from_pretrained(folder)
        res[name] = dict(key=recipe.key(), params=man['params'], build_seconds=man['build_seconds'], wall_seconds=built,
                         final_loss=round(sum(man['losses'][-100:]) / 100, 4), families=capability(model, tok))
        print(name, json.dumps({k: v for k, v in res[name].items() if k != 'families'}), flush=True)
        for n, v in res[name]['families'].items(): print(f"  {n:18} {json.dumps(v)}", flush=True)
    Path(a.out).mkdir(parents=True, exist_ok=True)
    (Path(a.out) / 'grow.json').write_text(json.dumps(res, indent=1))
