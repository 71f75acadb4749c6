"""Tiny job functions for `tests/test_pool.py` and `bench/pool.py`.

The pool's child processes import them by name (`'pool_jobs:record'`): the pool starts them with `cwd` = this folder,
which it also puts on `PYTHONPATH`. Every function takes the job folder first: `fn(job_dir, **args) -> dict`.
"""
import errno, json, os, subprocess, sys, time
from pathlib import Path


def _append(path, line):
    "Append one line (a single small O_APPEND write, so concurrent writers never interleave)."
    with open(path, 'a') as f: f.write(line + '\n')


def attempt() -> int: return int(os.environ['AF_POOL_ATTEMPT'])


def noop(job_dir): return {}


def square(job_dir, x): return {'y': x * x}


def echo(job_dir, **args): return {'args': args, 'attempt': attempt(), 'cwd': os.getcwd(), 'job_dir': str(job_dir)}


def record(job_dir, ledger, name, sleep=0.0, fail=False):
    "Write 'start NAME ATTEMPT' to the ledger, sleep, then raise (poison) or write 'done NAME' and return."
    _append(ledger, f'start {name} {attempt()}')
    time.sleep(sleep)
    if fail: raise ValueError(f'poison {name}')
    _append(ledger, f'done {name}')
    return {'name': name, 'attempt': attempt()}


def busy(job_dir, seconds, ledger=None):
    "Sleep `seconds`; record the function's own start and end times (for the utilisation benchmark)."
    t0 = time.time(); time.sleep(seconds); t1 = time.time()
    if ledger: _append(ledger, f'{t0} {t1}')
    return {'t0': t0, 't1': t1}


def sleeper(job_dir, seconds=30.0):
    "Start a grandchild `sleep`, note its pid in job_dir/grandchildren, and sleep: only a group kill ends both."
    p = subprocess.Popen(['sleep', str(seconds)])
    _append(Path(job_dir) / 'grandchildren', str(p.pid))
    time.sleep(seconds)
    return {}


def huge_result(job_dir, nbytes, fake_enospc=False):
    "Return a result of about `nbytes`; with `fake_enospc`, make every later os.write in this process fail with ENOSPC."
    if fake_enospc: os.write = _enospc
    return {'blob': 'x' * nbytes}


def spam_log(job_dir, nbytes, fake_enospc=False):
    "Print about `nbytes` to stdout; with `fake_enospc`, os.write (the log copier's) fails with ENOSPC first."
    if fake_enospc: os.write = _enospc
    line = 'y' * 1023
    for _ in range(nbytes // 1024): print(line)
    sys.stdout.flush(); time.sleep(0.2)
    return {'printed': nbytes}


def _enospc(fd, data): raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def ckpt_state(steps:int, state:int=1, start:int=0) -> int:
    "The training 'state' after `steps` steps: a pure function, so any resume must reproduce it."
    for s in range(start + 1, steps + 1): state = (state * 31 + s) % 1_000_003
    return state


def ckpt_train(job_dir, steps, slow_write=0.0, meta=None):
    """'Train' for `steps` steps, checkpointing each one with the pool's helpers; resume from the last verified one.

    Each checkpoint writes state.json, touches job_dir/writing-N, waits `slow_write` s, writes rng.bin, then commits:
    a kill during the wait leaves an unfinished temp folder behind, never a `step-N`.
    """
    from agentforge.durable import commit_checkpoint, latest_checkpoint, new_checkpoint_dir
    root, skipped = Path(job_dir) / 'ckpt', []
    last = latest_checkpoint(root, meta=meta, skipped=skipped)
    step, state = (0, 1) if last is None else (json.loads((last / 'manifest.json').read_text())['step'],
                                                json.loads((last / 'state.json').read_text())['state'])
    print(f'resuming from {last.name if last else None} (step {step}); skipped: {skipped}', flush=True)
    for s in range(step + 1, steps + 1):
        state = ckpt_state(s, state, s - 1)
        tmp = new_checkpoint_dir(root)
        (tmp / 'state.json').write_text(json.dumps({'state': state}))
        (Path(job_dir) / f'writing-{s}').touch()
        time.sleep(slow_write)
        (tmp / 'rng.bin').write_bytes(s.to_bytes(8, 'little') * 64)
        commit_checkpoint(tmp, root, s, meta)
    return {'state': state, 'resumed_from': last.name if last else None, 'skipped': skipped}


def threads(job_dir):
    "How many intra-op threads torch uses in this attempt, and what OMP_NUM_THREADS says."
    import torch
    return {'torch': torch.get_num_threads(), 'omp': os.environ.get('OMP_NUM_THREADS')}


def parent(job_dir): return {'ppid': os.getppid()}  # a warm attempt's parent is the warm process
