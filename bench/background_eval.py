"""The fixed evaluation graded in the background (lesson 13) against the foreground, side by side in one run.

The same short outer stage (`run.train_stage`: `--steps` steps, a fixed evaluation every `--every` steps and after
the last, `--seeds` episodes per family) twice, one mode after the other, each in a child process on its own fresh
inner-result and probe caches (the built student and agent base are linked from this machine's cache; the platform
folder, hidden splits included, is shared), so every spec either mode writes trains for real:

- `background` (the default run): the pool served from a thread for the whole stage, each evaluation's jobs queued
  below the steps' and graded later (`run.deferred_eval`, `episode.inner_served`);
- `foreground` (the code before it): no serving thread, each evaluation waits for its own jobs before the next step
  (`deferred_eval(...).finish()` at once), the agent's torch with its default threads;
- `oversubscribed` (only when asked for): the background mode with the agent's torch given two threads beside the
  two jobs, as the first version of it did (retro 2026-12-05-the-agent-and-two-jobs-shared-two-cores).

The two modes sample different specs (the agent's torch threads differ, so its floats and tokens do), so besides the
wall seconds of the stage it reports the busy slot-seconds of the inner jobs it ran and their ratio to the slots'
capacity over the stage (occupancy), and the seconds of the stage per busy slot-second. Asserts nothing.

Run: .venv/bin/python bench/background_eval.py [--steps 6] [--every 3] [--seeds 8] [--modes background,foreground]
                                               [--out F.json]
"""
import argparse, contextlib, json, os, sqlite3, subprocess, sys, tempfile, time
from pathlib import Path

CHILD = r'''
import contextlib, json, sys, time
from pathlib import Path
import torch
import agentforge.run as run
from agentforge.config import OuterConfig, RunConfig
mode, out, steps, every, seeds = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
if mode == 'foreground':
    run.inner_served = lambda *a, **k: contextlib.nullcontext()
    played = run.deferred_eval
    run.deferred_eval = lambda *a, **k: (d := played(*a, **k)) and d.finish()
if mode == 'oversubscribed':
    served = run.inner_served
    @contextlib.contextmanager
    def two_threads(*a, **k):
        with served(*a, **k) as s:
            torch.set_num_threads(2)
            yield s
    run.inner_served = two_threads
cfg = RunConfig(outer=OuterConfig(steps=steps), curve_every=every, curve_seeds=seeds)
out.mkdir(parents=True)
t = time.monotonic()
run.train_stage(cfg, out, progress=False)
print(json.dumps(dict(seconds=round(time.monotonic() - t, 1))))
'''


def occupancy(pool_db:Path, slots:int, seconds:float) -> dict:
    "Busy slot-seconds of the pool's jobs, their count, and their share of `slots` x `seconds`."
    c = sqlite3.connect(pool_db)
    rows = c.execute("SELECT started, finished FROM jobs WHERE state='done'").fetchall()
    busy = sum(f - s for s, f in rows)
    return dict(jobs=len(rows), busy_slot_seconds=round(busy, 1), occupancy=round(busy / (slots * seconds), 3),
                seconds_per_busy_slot_second=round(seconds / busy, 3) if busy else None)


def one(mode:str, args, root:Path) -> dict:
    from agentforge.tasks import cache_dir
    cache = root / mode / 'cache'
    cache.mkdir(parents=True)
    for d in ('students', 'agent'): (cache / d).symlink_to(cache_dir() / d, target_is_directory=True)
    out = root / mode / 'run'
    env = {**os.environ, 'AGENTFORGE_CACHE_DIR': str(cache)}
    t = time.monotonic()
    p = subprocess.run([sys.executable, '-c', CHILD, mode, str(out), str(args.steps), str(args.every), str(args.seeds)],
                       env=env, capture_output=True, text=True)
    if p.returncode: sys.exit(f'{mode} failed:\n{p.stderr[-3000:]}')
    stage = json.loads(p.stdout.strip().splitlines()[-1])['seconds']
    curve = [json.loads(l) for l in (out / 'curve.jsonl').read_text().splitlines()]
    metrics = [json.loads(l) for l in (out / 'metrics.jsonl').read_text().splitlines()]
    return dict(mode=mode, stage_seconds=stage, child_seconds=round(time.monotonic() - t, 1),
                **occupancy(out / 'pool' / 'queue.db', 2, stage),
                evaluations=[(r['step'], r['counts']['graded'], r['counts']['episodes']) for r in curve],
                agent_seconds=round(sum(r['seconds_agent'] for r in metrics), 1),
                update_seconds=round(sum(r['seconds_update'] for r in metrics), 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--steps', type=int, default=6, help='outer steps (default 6)')
    ap.add_argument('--every', type=int, default=3, help='a fixed evaluation every this many steps (default 3)')
    ap.add_argument('--seeds', type=int, default=8, help='evaluation episodes per family (default 8, as the demo)')
    ap.add_argument('--modes', default='background,foreground', help='in this order, comma-separated')
    ap.add_argument('--out', type=Path, help='write the figures as JSON here')
    args = ap.parse_args()
    order = args.modes.split(',')
    if not set(order) <= {'background', 'foreground', 'oversubscribed'} or len(set(order)) != len(order):
        ap.error(f'--modes: each of background, foreground, oversubscribed at most once, got {args.modes!r}')
    with tempfile.TemporaryDirectory(prefix='bench-background-') as tmp:
        res = [one(m, args, Path(tmp)) for m in order]
    for r in res:
        print(f"{r['mode']:10s} stage {r['stage_seconds']:7.1f} s  jobs {r['jobs']:3d}  busy {r['busy_slot_seconds']:7.1f} "
              f"slot-s  occupancy {r['occupancy']:.3f}  s per busy slot-s {r['seconds_per_busy_slot_second']:.3f}  "
              f"agent {r['agent_seconds']} s  update {r['update_seconds']} s  evaluations {r['evaluations']}")
    by, ratio = {r['mode']: r for r in res}, None
    if {'background', 'foreground'} <= set(by):
        ratio = by['background']['seconds_per_busy_slot_second'] / by['foreground']['seconds_per_busy_slot_second']
        print(f'background / foreground, stage seconds per busy slot-second: {ratio:.3f}')
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(dict(args={k: v for k, v in vars(args).items() if k != 'out'}, cpus=os.cpu_count(),
                                            date=time.strftime('%Y-%m-%d'), runs=res, ratio=ratio and round(ratio, 3)),
                                       indent=1) + '\n')


if __name__ == '__main__':
    main()
