"""Build the tiny student from its recipe in a fresh cache dir and print its size, build time and dev scores.

Run: .venv/bin/python bench/student.py [--samples N]
(This rebuilds from scratch: a few minutes on two cores. `agentforge student` uses the shared cache instead.)
"""
import argparse, json, os, tempfile, time

def main(samples:int):
    os.environ['AGENTFORGE_CACHE_DIR'] = tempfile.mkdtemp()
    from agentforge.student import build_student, evaluate, load_student, student_manifest
    from agentforge.families import FAMILIES
    from agentforge.tasks import dev_split
    t = time.monotonic(); folder = build_student(); wall = time.monotonic() - t
    man = student_manifest()
    size = sum(p.stat().st_size for p in folder.iterdir())
    print(f"built in {wall:.0f} s wall (training {man['build_seconds']} s), {man['params']:,} parameters, {size / 1e6:.1f} MB on disk")
    model, tok = load_student(progress=False)
    for n, f in FAMILIES.items():
        s = evaluate(model, tok, f, dev_split(f), samples=samples)['score']
        g = evaluate(model, tok, f, dev_split(f), samples=1, temperature=0)['score']
        print(f"  {n:18s} sampled (T=1, {samples}/item) {s:6.1%}   greedy {g:6.1%}")
    print(json.dumps(dict(key=man['key'], dev_scores=man['dev_scores'])))

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--samples', type=int, default=4, help='samples per dev item')
    main(ap.parse_args().samples)
