"""Experiment (issue 11, not adopted yet): a student with a *format habit* RL can remove.

The default student's habit is a wrong answer (`Family.distractor`) with probability 1 - p_gold; its errors are
mostly capability errors, and inner GRPO barely moves it (lesson 12b's landscape). This variant also wraps a share
`--p-wrap` of its pretraining answers in a preamble ("The answer is X"; support: "Sure! X"), which every family's
reference scorer marks wrong. A spec with a strict reward should teach the student to drop the preamble fast; a lazy
spec should not; a reckless one should wreck it. The script builds the variant in a temp folder, prints its dev
scores (T=1 mean of 8 samples, greedy, pass@8), then trains lesson 12b's heuristic, example, lazy and harmful specs
on `--briefs` with it.

Run: .venv/bin/python bench/student_habit.py --p-wrap 0.65 --p-gold 0.9 --briefs unit_conversion,arithmetic
(about 5 minutes of student build and 2 of inner jobs on two idle cores)
"""
import argparse, random, tempfile, time

def main(p_wrap:float, p_gold:float, steps:int, briefs:list, out:str):
    root = tempfile.mkdtemp()  # the variant's own folder; the probe still uses the shared default student
    import agentforge.student as S
    from agentforge.families import FAMILIES, get_family
    from agentforge.tasks import dev_split, prompt_key
    wrap = lambda name, said: ('Sure! {}' if name == 'customer_support' else 'The answer is {}').format(said)

    def rows(recipe, tok):  # student.pretraining_rows, plus the preamble
        rng, out = random.Random(recipe.seed), {}
        for name, _ in recipe.weights:
            fam = get_family(name)
            dev, params = {prompt_key(i.prompt) for i in dev_split(fam)}, fam.check_params(fam.eval_params)
            fr = []
            while len(fr) < recipe.rows_per_family:
                prompt, answer, meta = fam.sample(rng, **params)
                if prompt_key(prompt) in dev: continue
                said = answer if rng.random() < recipe.p_gold else fam.distractor(rng, prompt, answer, meta)
                if rng.random() < p_wrap: said = wrap(name, said)
                fr.append((tok(S.render_prompt(tok, prompt))['input_ids'], tok(said + tok.eos_token)['input_ids']))
            out[name] = fr
        return out
    S.pretraining_rows = rows
    t = time.monotonic(); folder = S.build_student(S.StudentRecipe(p_gold=p_gold, steps=steps), root=root)
    print(f"built in {time.monotonic() - t:.0f} s: {folder}", flush=True)
    model, tok = S.load_student(str(folder), progress=False)
    for n, f in FAMILIES.items():
        t1 = S.evaluate(model, tok, f, dev_split(f), samples=8)
        g = S.evaluate(model, tok, f, dev_split(f), samples=1, temperature=0)['score']
        p8 = sum(x > 0 for x in t1['per_item']) / len(t1['per_item'])
        print(f"  {n:18s} T=1 {t1['score']:6.1%}  greedy {g:6.1%}  pass@8 {p8:6.1%}  pass@8 - greedy {p8 - g:+.2f}")
    from agentforge.landscape import format_landscape, landscape
    land = landscape(briefs, student=str(folder), kinds=('heuristic', 'example', 'lazy', 'harmful'), n_random=0,
                     noise_seeds=2, out=out)
    print(format_landscape(land))

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--p-wrap', type=float, default=0.65, help='share of pretraining answers wrapped in a preamble')
    ap.add_argument('--p-gold', type=float, default=0.9, help='share of right answers (the rest: distractors)')
    ap.add_argument('--steps', type=int, default=2400, help='pretraining steps')
    ap.add_argument('--briefs', default='unit_conversion,arithmetic', help='comma-separated briefs for the landscape')
    ap.add_argument('--out', default=tempfile.mkdtemp(), help='landscape spec folders and landscape.json')
    a = ap.parse_args()
    main(a.p_wrap, a.p_gold, a.steps, a.briefs.split(','), a.out)
