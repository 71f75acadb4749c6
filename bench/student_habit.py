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
    t = time.monotonic(); folder = S.build_student(S.StudentRecipe(p_gold=p_gold, habit=p_wrap, steps=steps), root=root)
    print(f"built in {time.monotonic() - t:.0f} s: {folder}", flush=True)
    model, tok = S.load_student(str(folder), progress=False)
    for n, p in S.dev_profile(model, tok).items():
        print(f"  {n:18s} T=1 {p['t1']:6.1%}  greedy {p['greedy']:6.1%}  pass@8 {p['pass_at_k']:6.1%}  "
              f"pass@8 - greedy {p['pass_at_k'] - p['greedy']:+.2f}")
    if not briefs: return
    from agentforge.landscape import format_landscape, landscape
    land = landscape(briefs, student=str(folder), kinds=('heuristic', 'example', 'lazy', 'harmful'), n_random=0,
                     noise_seeds=2, out=out)
    print(format_landscape(land))

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--habit', dest='p_wrap', type=float, default=0.6, help='share of pretraining answers followed by CHATTER')
    ap.add_argument('--p-gold', type=float, default=0.9, help='share of right answers (the rest: distractors)')
    ap.add_argument('--steps', type=int, default=2400, help='pretraining steps')
    ap.add_argument('--briefs', default='unit_conversion,arithmetic', help='comma-separated briefs for the landscape')
    ap.add_argument('--out', default=tempfile.mkdtemp(), help='landscape spec folders and landscape.json')
    a = ap.parse_args()
    main(a.p_wrap, a.p_gold, a.steps, [b for b in a.briefs.split(',') if b], a.out)
