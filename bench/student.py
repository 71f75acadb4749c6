"""Build the tiny student from its recipe in a fresh cache dir and print its size, build time and dev scores.

Run: .venv/bin/python bench/student.py [--samples N]
     .venv/bin/python bench/student.py --loss-steps 60 [--out FILE.json]
(The first rebuilds from scratch: a few minutes on two cores. `agentforge student` uses the shared cache instead.)

`--loss-steps N` times the student recipe's training step two ways, side by side on the same batches (rounds alternate
so both see the same machine load): the output layer over every position (`model(**batch).loss`, as the student was
built until 2026-12-04) and over the labelled positions only (`student.target_loss`). Prints ms per step and the ratio;
asserts nothing (these machines are shared and noisy).
"""
import argparse, json, os, random, statistics, tempfile, time

def build(samples:int):
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

def loss_steps(steps:int, rounds:int=3, out:str|None=None):
    import torch
    from agentforge import student
    from agentforge.models import tiny_model
    recipe = student.StudentRecipe(rows_per_family=400)  # the recipe's rows, fewer of them (the step is the same)
    tok = student.student_tokenizer(recipe)
    rows = student.pretraining_rows(recipe, tok)
    pool = [pair for name, w in recipe.weights for pair in rows[name] for _ in range(w)]
    rng = random.Random(0)
    batches = [[pool[rng.randrange(len(pool))] for _ in range(recipe.batch_size)] for _ in range(steps)]
    full = lambda model, b: model(**b).loss
    ms = {'every position': [], 'labelled only': []}
    for _ in range(rounds):
        for name, fn in (('every position', full), ('labelled only', student.target_loss)):
            saved, student.target_loss = student.target_loss, fn
            try:
                model = tiny_model(recipe.size, seed=0, tok=tok).train()
                opt = torch.optim.AdamW(model.parameters(), lr=recipe.lr)
                sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
                t = time.perf_counter()
                for b in batches: student.train_step(model, b, tok.pad_token_id, recipe.buckets, opt, sched)
                ms[name].append((time.perf_counter() - t) / steps * 1e3)
            finally: student.target_loss = saved
    res = {k: round(statistics.median(v), 1) for k, v in ms.items()}
    res['ratio'] = round(res['labelled only'] / res['every position'], 3)
    res.update(steps=steps, rounds=rounds, batch=recipe.batch_size, buckets=recipe.buckets,
               build_steps=recipe.steps, threads=torch.get_num_threads())
    print(f"ms per training step (median of {rounds} rounds of {steps} steps): every position {res['every position']}, "
          f"labelled only {res['labelled only']} (ratio {res['ratio']}); over the recipe's {recipe.steps} steps: "
          f"{res['every position'] * recipe.steps / 1e3:.0f} s against {res['labelled only'] * recipe.steps / 1e3:.0f} s")
    if out: open(out, 'w').write(json.dumps(res, indent=1) + '\n')

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--samples', type=int, default=4, help='samples per dev item')
    ap.add_argument('--loss-steps', type=int, default=0, help='time this many training steps each way instead of building')
    ap.add_argument('--rounds', type=int, default=3, help='with --loss-steps: rounds, alternating the two ways')
    ap.add_argument('--out', help='with --loss-steps: write the figures here (JSON)')
    a = ap.parse_args()
    loss_steps(a.loss_steps, a.rounds, a.out) if a.loss_steps else build(a.samples)
