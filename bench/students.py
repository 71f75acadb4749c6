"""The two tiny students side by side: the same spec trained on each, per family (issue 11: a larger student, the
analogue of the reference's Qwen3-0.6B / 1.7B choice, with a higher post score and slower jobs).

For each brief, the scripted heuristic spec (`agents.HEURISTIC`, the family's template) is trained on `tiny-student`
and on `tiny-student-large` (lesson 03b: the tiny student one layer deeper, pretrained 1,000 more steps), in turn,
`--rounds` times, with the result cache off, so every job really trains and the two students' wall times are taken
under the same machine load. Scoring is the platform's protocol (greedy on the hidden split: 1,024 items since
2026-12-06). Prints one line per brief and the medians; writes `--out`/students.json. Asserts nothing: the machine is
shared and noisy.

Run: .venv/bin/python bench/students.py --out results/students   (~12 jobs of 15-40 s, builds the larger student
     first if it is not cached: about 2 minutes on two cores)
"""
import argparse, json, statistics, tempfile, time
from pathlib import Path

STUDENTS = ('tiny-student', 'tiny-student-large')

def run(briefs:list, rounds:int, work:Path) -> list:
    from agentforge.agents import HEURISTIC, write_spec
    from agentforge.grading import episode_reward, speed_budget, uplift
    from agentforge.inner import run_inner
    from agentforge.student import RECIPES, build_student, student_manifest
    for s in STUDENTS: build_student(RECIPES[s])
    rows = []
    for brief in briefs:
        spec = work / brief
        spec.mkdir(parents=True, exist_ok=True)
        (spec / 'task.yaml').write_text(write_spec(brief, HEURISTIC))
        for k in range(rounds):
            for student in (STUDENTS if k % 2 == 0 else STUDENTS[::-1]):   # alternate who goes first
                t = time.monotonic()
                r = run_inner(spec, student, cache=False, work_dir=work / 'jobs' / f'{brief}-{student}-{k}')  # trains afresh
                g = episode_reward(1, r.pre, r.post, r.train_seconds, speed_budget(student))
                row = dict(brief=brief, student=student, round=k, pre=r.pre, post=r.post,
                           gain=uplift(r.pre, r.post, 'normalized', floor=-1.0), raw=round(r.post - r.pre, 4),
                           train_seconds=r.train_seconds, wall_seconds=round(time.monotonic() - t, 1),
                           reward=g.total, params=student_manifest(RECIPES[student])['params'])
                print(json.dumps(row), flush=True)
                rows.append(row)
    return rows

def summary(rows:list) -> dict:
    out = {}
    for brief in dict.fromkeys(r['brief'] for r in rows):
        per = {s: [r for r in rows if r['brief'] == brief and r['student'] == s] for s in STUDENTS}
        med = lambda s, k: statistics.median(r[k] for r in per[s])
        out[brief] = {s: {k: round(med(s, k), 4) for k in ('pre', 'post', 'gain', 'raw', 'train_seconds', 'reward')}
                      for s in STUDENTS}
        out[brief]['train_time_ratio'] = round(med(STUDENTS[1], 'train_seconds') / med(STUDENTS[0], 'train_seconds'), 2)
    return out

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--briefs', default=None, help='comma-separated briefs (default: every family)')
    ap.add_argument('--rounds', type=int, default=1, help='jobs per student and brief (the order alternates)')
    ap.add_argument('--out', default='results/students', help='students.json goes here')
    a = ap.parse_args()
    from agentforge.families import FAMILIES
    briefs = a.briefs.split(',') if a.briefs else list(FAMILIES)
    rows = run(briefs, a.rounds, Path(tempfile.mkdtemp(prefix='students-')))
    s = summary(rows)
    print(f"{'brief':18} {'student':19} {'pre':>6} {'post':>6} {'gain':>6} {'train s':>8} {'reward':>7}")
    for brief, v in s.items():
        for st in STUDENTS:
            x = v[st]
            print(f"{brief:18} {st:19} {x['pre']:6.3f} {x['post']:6.3f} {x['gain']:+6.3f} {x['train_seconds']:8.1f} "
                  f"{x['reward']:7.3f}")
        print(f"{'':18} train-time ratio (large / small): {v['train_time_ratio']}")
    Path(a.out).mkdir(parents=True, exist_ok=True)
    (Path(a.out) / 'students.json').write_text(json.dumps(dict(rows=rows, summary=s, rounds=a.rounds), indent=1))
