"""Try a student recipe with a *format habit* side by side with the default (issue 11; lesson 03b, lesson 12b).

The default student (`StudentRecipe()`: `p_gold=1.0`, `habit_spread=(0.35, 0.65, 0.75, 0.8)`) ends a share of its
pretraining answers that depends on the kind of item (`Family.habit_group`) with `CHATTER` (" Hope this helps!"),
which every family's reference scorer marks wrong. A spec with a strict reward teaches it to stop at the answer; a
lazy spec does not; a reckless one wrecks it. This script builds a variant with another `--spread` (or, with
`--spread ''`, one `--habit` share on every item), `--p-gold` and `--chatters` (each kind of item its own chatter) in
a temp folder (or `--root`), prints its dev profile (T=1 mean of 8 samples, greedy, pass@8) and trains lesson 12b's
heuristic, example, lazy and harmful specs on `--briefs` with it (`--briefs ''`: profile only; then
`bench/knobs.py --student FOLDER` for its knob table, as in results/knobs/chatters/).

Run: .venv/bin/python bench/student_habit.py --spread '' --habit 0.65 --p-gold 1.0 --briefs arithmetic,date_math
(about 4 minutes of student build and 1-2 of inner jobs per brief on two idle cores). Recorded: lesson 12b's table.
"""
import argparse, random, tempfile, time

def main(p_wrap:float, p_gold:float, steps:int, briefs:list, out:str, level_habit:tuple=(), spread:tuple=(),
         chatters:int=0, root:str|None=None):
    root = root or tempfile.mkdtemp()  # the variant's own folder; the probe still uses the shared default student
    import agentforge.student as S
    t = time.monotonic(); folder = S.build_student(S.StudentRecipe(p_gold=p_gold, habit=p_wrap, steps=steps, level_habit=level_habit,
                                                                     habit_spread=spread, chatters=chatters), root=root)
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
    ap.add_argument('--habit', dest='p_wrap', type=float, default=0.5,
                    help="share of pretraining answers followed by CHATTER, on every item (with --spread '')")
    ap.add_argument('--p-gold', type=float, default=1.0, help='share of right answers (the rest: distractors)')
    ap.add_argument('--steps', type=int, default=2400, help='pretraining steps')
    ap.add_argument('--briefs', default='unit_conversion,arithmetic', help='comma-separated briefs for the landscape')
    ap.add_argument('--level-habit', default='', help="habit share per difficulty level, e.g. '0.05,0.6,0.9' "
                    "(rows drawn at every level; the retro 2026-12-01-difficulty-habit-unteachable); '': --habit everywhere")
    ap.add_argument('--spread', default='0.35,0.65,0.75,0.8', help="habit share per kind of item "
                    "(Family.habit_group, in turn); '': --habit on every item (the retro 2026-12-02-uniform-habit-all-or-nothing)")
    ap.add_argument('--chatters', type=int, default=0, help="n >= 2: each kind of item its own chatter, the first n "
                    "of student.CHATTERS in turn (a habit a spec must cut kind by kind); 0: CHATTER on every kind")
    ap.add_argument('--root', default=None, help='build the student here (default: a temp folder); its folder is '
                    'printed, for bench/knobs.py --student')
    ap.add_argument('--out', default=tempfile.mkdtemp(), help='landscape spec folders and landscape.json')
    a = ap.parse_args()
    main(a.p_wrap, a.p_gold, a.steps, [b for b in a.briefs.split(',') if b], a.out,
         tuple(float(x) for x in a.level_habit.split(',') if x), tuple(float(x) for x in a.spread.split(',') if x),
         a.chatters, a.root)
