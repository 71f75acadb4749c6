"""What the hidden split's size costs in scoring: the untrained student scored greedily on the first 512 and on all
1,024 hidden items of each family, side by side (three rounds, medians), in one process on one thread.

Run: .venv/bin/python bench/hidden_size.py [--out results/bench/hidden-size.json]
(about a minute; uses the data dir's hidden splits, so AGENTFORGE_DATA_DIR picks the split). Lesson 07a reads the
recorded figures. Asserts nothing: these machines are shared and noisy; compare the two sizes within one run.
"""
import argparse, json, statistics, time
from pathlib import Path

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--out', help='write the medians as JSON here')
    a = ap.parse_args()
    import torch
    torch.set_num_threads(1)
    from agentforge.families import FAMILIES, get_family
    from agentforge.student import evaluate, load_student
    from agentforge.tasks import HIDDEN_SIZE, hidden_split
    m, tok = load_student('tiny-student', progress=False)
    m.eval()
    out = {}
    for b in FAMILIES:
        fam, sizes = get_family(b), (HIDDEN_SIZE // 2, HIDDEN_SIZE)
        items, t = hidden_split(fam), {n: [] for n in sizes}
        for _ in range(a.rounds):
            for n in sizes:  # alternating, so both sizes see the same machine load
                t0 = time.perf_counter()
                evaluate(m, tok, fam, items[:n], samples=1, temperature=0.0)
                t[n].append(time.perf_counter() - t0)
        out[b] = {str(n): round(statistics.median(v), 2) for n, v in t.items()}
        print(f"{b:17} " + '  '.join(f"{n} items {s:5.2f} s" for n, s in out[b].items()), flush=True)
    if a.out: Path(a.out).write_text(json.dumps(dict(seconds=out, rounds=a.rounds, threads=1), indent=1))
