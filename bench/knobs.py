"""Which knobs of the design space move uplift? Train the heuristic spec and every one-knob change of it (issue 11).

For each brief, the heuristic spec (`agents.HEURISTIC`) and, for every other option of every knob in
`agents.KNOBS`, the heuristic with that one option changed, are probed and trained on the default student and
scored greedily on the hidden split (lesson 12b's protocol: `landscape.knob_rows`), each with `--seeds` training
seeds so that the training noise is measured (`--knobs` limits the knobs tried). A knob "moves uplift" on a brief
when some option's mean normalised gain differs from the heuristic's by more than 2 standard errors of the
difference, scoring and training noise both counted (`landscape.knob_effects`). Tables written with different
`--knobs` or `--seeds` merge: a spec trained in both counts once per seed. `--base max_steps=16` starts every spec from
the heuristic with those options instead (a budget that binds: where the signal each step carries can matter;
`--base level=3`: harder data, where right completions are rarer), and the table shows each base on its own.
`--options temperature=0.3,num_generations=2` tries those options instead, outside `agents.KNOBS` too; the table
shows them in their knob's rows. `--student FOLDER` trains another student (e.g. one `bench/student_habit.py --root`
built): its rows name it, and a table never mixes two students.

Run: .venv/bin/python bench/knobs.py --briefs arithmetic,string_ops --out results/knobs
(--seeds 1: 14 inner jobs of 10-45 s per brief on one core; the default --seeds 4, four times that. Run two briefs
lists side by side on two cores, then `--merge results/knobs` prints the table of every knobs-*.json there).
Recorded: results/knobs/, lesson 12b.
"""
import argparse, json, sys, time
from pathlib import Path

def run(briefs:list, out:Path, work:Path, seeds:int, knobs, base:dict, student:str='tiny-student') -> list:
    from agentforge.landscape import knob_rows
    opts = lambda k: ''.join(f'-{o}' for o in knobs[k]) if isinstance(knobs, dict) else ''
    tag = '-'.join(briefs) + ''.join(f'-{k}{opts(k)}' for k in knobs or ())
    tag += ''.join(f'-at-{k}-{v}' for k, v in base.items())
    tag += '' if student == 'tiny-student' else f'-{Path(student).name}'  # a built student: its recipe key
    rows = []
    for brief in briefs:
        got = knob_rows(brief, student, work=work, seeds=seeds, knobs=knobs, base=base)
        for r in got: print(json.dumps(r), flush=True)
        rows += got
        (out / f"knobs-{tag}.json").write_text(json.dumps(rows, indent=1))
    return rows

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--briefs', default='arithmetic,string_ops', help='comma-separated briefs')
    ap.add_argument('--out', default='results/knobs', help='knobs-<briefs>.json goes here')
    ap.add_argument('--work', default=None, help='spec folders (default: a temp folder)')
    ap.add_argument('--seeds', type=int, default=4,
                    help="training seeds of every spec (their SD enters each knob's test; 1: each spec trained once)")
    ap.add_argument('--knobs', default=None, help='comma-separated knobs whose options are tried (default: all)')
    ap.add_argument('--base', default='', metavar='KNOB=OPTION,...',
                    help="options every spec shares, over the heuristic's (e.g. max_steps=16; default: none)")
    ap.add_argument('--options', default='', metavar='KNOB=OPTION,...',
                    help='the options tried instead of --knobs, outside agents.KNOBS too '
                         '(e.g. temperature=0.3,temperature=0.5)')
    ap.add_argument('--student', default='tiny-student', help='a student preset or a built student folder '
                    '(bench/student_habit.py --root prints one); its table is tagged with the folder name')
    ap.add_argument('--merge', metavar='DIR', help='only print the table of every knobs-*.json in DIR')
    a = ap.parse_args()
    if a.options and a.knobs: ap.error('--options names the knobs it tries: give it or --knobs, not both')
    from agentforge.landscape import format_knobs
    if a.merge:
        print(format_knobs([r for p in sorted(Path(a.merge).glob('knobs-*.json')) for r in json.loads(p.read_text())]))
        sys.exit()
    out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    import tempfile
    work = Path(a.work or tempfile.mkdtemp(prefix='knobs-'))
    knobs = [k for k in a.knobs.split(',') if k] if a.knobs else None
    from agentforge.landscape import knob_options
    def pairs(flag, text):
        try: return knob_options(text)
        except ValueError as e: ap.error(f'--{flag} {e}')
    base = dict(pairs('base', a.base))
    if a.options:
        knobs = {}
        for k, o in pairs('options', a.options): knobs.setdefault(k, []).append(o)
    print(format_knobs(run([b for b in a.briefs.split(',') if b], out, work, a.seeds, knobs, base, a.student)))
