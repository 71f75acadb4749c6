"""What can a spec teach the default student? Its hidden-split answers with the habit cut, by kind of item (lesson 03b).

RL in a 48-step job removes the student's habit (the chatter after an answer); it adds little capability. So the most
a spec can reach on a family is about what the untrained student scores with its habit cut from every answer.
Three measurements:
1. `habit`: per family, the untrained student's greedy hidden score, the same answers with `student.CHATTER` cut
   (what `landscape.habit_free` reads from the platform's scorer: the score and the normalised gain it would give),
   each by kind of item
   (`Family.habit_group`, named here) — where a family's ceiling comes from;
2. `seen`: date math's weekday questions the student saw in pretraining, asked again (is it at chance because it
   never saw them, or because it could not learn them?);
3. `alone`: the same recipe on date math alone (`weights=(('date_math', 1),)`), `--alone-steps` steps each, built in a
   temp cache: what the family's kinds reach when the student's whole budget goes to them.
Writes --out/capability.json. Run: .venv/bin/python bench/student_capability.py --out results/student
(about 4 minutes on two cores with the student built: 50 s of scoring, then 35 s + 125 s of builds).

`--recipe JSON` measures another recipe instead (the default with those fields changed, built from scratch in a temp
cache): its build time, whether its dev scores stay in `DEV_BAND`, and the same `habit` table, in
--out/capability-recipe.json. E.g. `--recipe '{"steps": 7200, "rows_per_family": 9000}'`: three times the
pretraining (about 8 minutes on two cores).
"""
import argparse, dataclasses, json, os, random, re, tempfile, time
from pathlib import Path

KIND_NAMES = {
    'arithmetic': ['+ one digit', '+ two digits', '- one digit', '- two digits', '* one digit', '* two digits'],
    'date_math': ['iso after', 'iso before', 'weekday after', 'weekday before'],
    'unit_conversion': [f"x{f} {d}" for f in (10, 24, 60, 100, 1000) for d in ('up', 'down')],
    'string_ops': ['reverse', 'upper', 'count', 'last'],
    'multihop_lookup': ['mother', 'father', 'sister', 'brother', 'boss', 'friend', 'coach', 'neighbor'],
}

def named(brief:str, kinds:dict) -> dict:
    "The kinds of `brief` keyed by a readable name (the product or relation for the families that group by one)."
    if brief == 'customer_support':
        from agentforge.support import PRODUCTS
        names = list(PRODUCTS)
    else: names = KIND_NAMES.get(brief, [])
    return {(names[int(k)] if int(k) < len(names) else k): v for k, v in kinds.items()}

def habit(model=None, tok=None) -> dict:
    "Per family on the hidden split, greedy: the score, the score with the habit cut, its normalised gain, by kind."
    from agentforge.families import FAMILIES, get_family
    from agentforge.grading import uplift
    from agentforge.student import evaluate, load_student
    from agentforge.tasks import hidden_split
    if model is None: model, tok = load_student(progress=False)
    out = {}
    for b in FAMILIES:
        ev = evaluate(model, tok, b, hidden_split(get_family(b)), samples=1, temperature=0)
        pre, free = round(ev['score'], 4), round(ev['habit_free'], 4)
        out[b] = dict(pre=pre, habit_free=free, gain=round(uplift(pre, free, 'normalized', floor=-1.0), 4),
                      kinds=named(b, ev['kinds']))
        print(f"{b:17} pre {pre:.3f}  habit cut {free:.3f}  gain {out[b]['gain']:+.3f}   " +
              ', '.join(f"{k} {v['habit_free']:.2f} (n {v['n']})" for k, v in out[b]['kinds'].items()), flush=True)
    return out

def _weekday_acc(model, tok, questions:list, answers:dict) -> float:
    from agentforge.student import CHATTER, complete
    outs = complete(model, tok, questions, temperature=0)
    return sum(o.replace(CHATTER, '').strip() == answers[q] for o, q in zip(outs, questions)) / len(questions)

def seen() -> dict:
    "Date math's weekday questions from the student's own pretraining rows, asked again, greedy, habit cut."
    from agentforge.student import CHATTER, StudentRecipe, load_student, pretraining_rows
    model, tok = load_student(progress=False)
    rows = pretraining_rows(StudentRecipe(), tok)['date_math']
    answers, count = {}, 0
    for p, c in rows:
        m = re.search(r'What day of the week is [^?]*\?', tok.decode(p))
        if m:
            count += 1
            answers[m.group(0)] = tok.decode(c, skip_special_tokens=True).replace(CHATTER, '').strip()
    qs = sorted(answers)
    res = dict(weekday_rows=count, distinct=len(qs), accuracy=round(_weekday_acc(model, tok, qs, answers), 4),
               chance=round(1 / 7, 4))
    print(f"seen: {count} weekday rows, {len(qs)} distinct questions; greedy, habit cut: {res['accuracy']:.3f} "
          f"(chance {res['chance']:.3f})", flush=True)
    return res

def other_recipe(fields:dict) -> dict:
    "The default recipe with `fields` changed, built from scratch in a temp cache: build time, dev band, `habit`."
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from agentforge.student import DEV_BAND, StudentRecipe, build_student
    if 'weights' in fields: fields['weights'] = tuple(tuple(w) for w in fields['weights'])
    recipe = dataclasses.replace(StudentRecipe(), **fields)
    t = time.monotonic()
    folder = build_student(recipe, progress=False, root=Path(tempfile.mkdtemp(prefix='recipe-')))
    man = json.loads((folder / 'manifest.json').read_text())
    print(f"recipe {fields}: built in {time.monotonic() - t:.0f} s (training {man['build_seconds']} s); dev scores "
          f"{man['dev_scores']}", flush=True)
    model, tok = AutoModelForCausalLM.from_pretrained(folder).eval(), AutoTokenizer.from_pretrained(folder)
    return dict(fields=fields, key=recipe.key(), build_seconds=man['build_seconds'], dev_scores=man['dev_scores'],
                in_dev_band=all(DEV_BAND[0] <= v <= DEV_BAND[1] for v in man['dev_scores'].values()),
                habit=habit(model, tok))

def alone(steps_list:list) -> dict:
    "The default recipe on date math alone, each step count built from scratch in a temp cache; kinds on 512 items."
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from agentforge.families import get_family
    from agentforge.student import StudentRecipe, build_student, evaluate
    from agentforge.tasks import Item
    fam, rng = get_family('date_math'), random.Random(11)
    items = [Item(f'probe/{i}', *fam.sample(rng, **fam.check_params(fam.eval_params))) for i in range(512)]
    root, out = Path(tempfile.mkdtemp(prefix='alone-')), {}
    for steps in steps_list:
        recipe = dataclasses.replace(StudentRecipe(), weights=(('date_math', 1),), steps=steps)
        t = time.monotonic()
        folder = build_student(recipe, progress=False, root=root)
        model, tok = AutoModelForCausalLM.from_pretrained(folder).eval(), AutoTokenizer.from_pretrained(folder)
        ev = evaluate(model, tok, fam, items, samples=1, temperature=0)
        out[str(steps)] = dict(seconds=round(time.monotonic() - t, 1), score=round(ev['score'], 4),
                               habit_free=round(ev['habit_free'], 4), kinds=named('date_math', ev['kinds']))
        print(f"date math alone, {steps} steps ({out[str(steps)]['seconds']:.0f} s): habit cut "
              f"{ev['habit_free']:.3f}; " + ', '.join(f"{k} {v['habit_free']:.2f}" for k, v in
                                                       out[str(steps)]['kinds'].items()), flush=True)
    return out

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--out', default='results/student', help='capability.json goes here')
    ap.add_argument('--alone-steps', default='600,2000', help='comma-separated step counts for the date-math-only builds')
    ap.add_argument('--recipe', metavar='JSON', help='instead: measure the default recipe with these fields changed, '
                    'e.g. \'{"steps": 7200}\' (writes capability-recipe.json)')
    a = ap.parse_args()
    if a.recipe:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        res = other_recipe(json.loads(a.recipe))
        (Path(a.out) / 'capability-recipe.json').write_text(json.dumps(res, indent=1) + '\n')
        raise SystemExit(0)
    from agentforge.student import StudentRecipe
    from agentforge.tasks import data_dir
    res = dict(student=StudentRecipe().key(), data_dir=str(data_dir()), habit=habit(), seen=seen(),
               alone=alone([int(s) for s in a.alone_steps.split(',')]))
    Path(a.out).mkdir(parents=True, exist_ok=True)
    (Path(a.out) / 'capability.json').write_text(json.dumps(res, indent=1) + '\n')
