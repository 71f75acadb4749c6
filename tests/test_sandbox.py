"""Adversarial tests of the reward sandbox (`agentforge.sandbox`): every attack of SECURITY.md ends in a clear reason code.

After each adversarial test the `guard` fixture checks: the hidden file is unchanged and its canary appears nowhere in
the results, no sandbox process, mount or temp dir is left, and an honest run started in a thread alongside finished
with its expected values. In CI (`CI=true`) nothing here skips: a missing bubblewrap fails.
"""
import dataclasses, hashlib, json, os, shutil, socket, subprocess, sys, tempfile, threading, time
import pytest
from agentforge import sandbox as sb
from agentforge.sandbox import HARNESS_PATH, Limits, SandboxUnsafe
from agentforge.harness import ensure_safe
from agentforge.worker import RewardWorker, run_rewards
from agentforge.tasks import CANARY_PREFIX, hidden_path, hidden_split
from agentforge.families import get_family

HAVE_BWRAP = shutil.which('bwrap') is not None
needs_bwrap = pytest.mark.skipif(not HAVE_BWRAP and not sb.in_ci(),
                                 reason='WEAK MODE: bubblewrap is not installed on this developer machine (never skipped in CI)')
FAST = Limits(call_s=1.5, import_s=3.0)
BATCH = dict(prompts=['2+3?', '4+4?', '1+1?'], completions=['5', '9', '2'], answer=['5', '8', '2'], ids=['a', 'b', 'c'])
HONEST = '''
def exact(prompts, completions, answer, **kw):
    return [float(c.strip() == a) for c, a in zip(completions, answer)]
'''
HONEST_VALUES = {'a': 1.0, 'b': 0.0, 'c': 1.0}


def test_bubblewrap_present_in_ci():
    "CI installs bubblewrap; without it the sandbox tests must fail there, not skip."
    if sb.in_ci(): assert HAVE_BWRAP, 'CI=true but bwrap is missing: install bubblewrap'


def write_spec(root, src:str, name='spec'):
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    (d / 'reward.py').write_text(src)
    return d


# ---------------------------------------------------------------- fixtures: platform secrets and the invariants
@pytest.fixture(scope='module')
def platform(tmp_path_factory):
    "A private platform data dir with a hidden split (and its canaries) planted in it."
    root = tmp_path_factory.mktemp('af-platform')
    old = os.environ.get('AGENTFORGE_DATA_DIR')
    os.environ['AGENTFORGE_DATA_DIR'] = str(root)
    fam = get_family('arithmetic')
    items = hidden_split(fam)
    path = hidden_path(fam)
    yield dict(path=path, sha=hashlib.sha256(path.read_bytes()).hexdigest(), canaries=[i.canary for i in items], root=root)
    if old is None: os.environ.pop('AGENTFORGE_DATA_DIR', None)
    else: os.environ['AGENTFORGE_DATA_DIR'] = old


# Every sandbox this test process starts carries this tag (bubblewrap's argv, the harness's environment), so leftovers
# are found even if re-parented, and sandboxes of other processes on the machine are not mistaken for ours.
TAG = f'af-test-{os.getpid()}-{os.urandom(4).hex()}'
sb.SANDBOX_ENV['AF_TEST_TAG'] = TAG


def _ours() -> list:
    "Live processes started by this test process's sandboxes (tagged), or any live child of ours."
    found = []
    for p in os.listdir('/proc'):
        if not p.isdigit(): continue
        try:
            cmd = open(f'/proc/{p}/cmdline', 'rb').read()
            st = open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()
            env = open(f'/proc/{p}/environ', 'rb').read() if HARNESS_PATH.encode() in cmd or b'af_harness' in cmd else b''
        except OSError: continue
        if st[0] != 'Z' and (TAG.encode() in cmd or TAG.encode() in env or int(st[1]) == os.getpid()):
            found.append((p, cmd[:80]))
    return found


def _af_tmp() -> set: return {e for e in os.listdir('/tmp') if e.startswith('af-')}
_AF_TMP_AT_IMPORT = _af_tmp()
def _mounts() -> str: return open('/proc/self/mountinfo').read()


class Guard:
    def __init__(self, platform, tmp_path):
        self.platform, self.results = platform, []
        self.honest_dir = write_spec(tmp_path, HONEST, 'honest-concurrent')
        self.honest = {}
    def seen(self, *results):
        "Register results whose text must not hold any hidden canary."
        self.results += results
        return results[0] if len(results) == 1 else results
    def run_honest(self):
        self.honest.update(run_rewards(self.honest_dir, 'exact', BATCH))


@pytest.fixture
def guard(platform, tmp_path):
    "Check the invariants around an adversarial test, with an honest run in a thread alongside it."
    before_tmp, before_mounts = _af_tmp(), _mounts()
    g = Guard(platform, tmp_path)
    t = threading.Thread(target=g.run_honest)
    t.start()
    yield g
    t.join(60)
    assert not t.is_alive()
    h = g.honest['exact']
    assert (h.reason, h.values) == (None, HONEST_VALUES), h
    assert hashlib.sha256(platform['path'].read_bytes()).hexdigest() == platform['sha']
    text = json.dumps([dataclasses.asdict(r) for r in g.results + [h]])
    assert CANARY_PREFIX not in text and not any(c in text for c in platform['canaries'])
    deadline = time.monotonic() + 5
    while _ours() and time.monotonic() < deadline: time.sleep(0.05)
    assert _ours() == []
    assert _af_tmp() <= before_tmp
    assert _mounts() == before_mounts


def run1(tmp_path, src, limits=FAST, batch=BATCH, fn='f'):
    return run_rewards(write_spec(tmp_path, src), fn, batch, limits=limits)[fn]


# ---------------------------------------------------------------- honest control and basics
@needs_bwrap
def test_honest_control(guard, tmp_path):
    r = guard.seen(run1(tmp_path, HONEST, fn='exact'))
    assert (r.reason, r.values, r.mode) == (None, HONEST_VALUES, 'bwrap')
    assert r.ok and not r.infra and r.seconds > 0 and r.start_seconds > 0


@needs_bwrap
def test_none_means_not_applicable_and_extra_columns(guard, tmp_path):
    src = 'def f(prompts, completions, answer, level, **kw):\n  return [None if l == 0 else 0.5 for l in level]'
    r = guard.seen(run1(tmp_path, src, batch={**BATCH, 'level': [0, 1, 2]}))
    assert (r.reason, r.values) == (None, {'a': None, 'b': 0.5, 'c': 0.5})


@needs_bwrap
def test_canary_run_passes_and_reports_isolation():
    rep = ensure_safe(force=True)
    assert {k: rep[k] for k in ('read', 'connect', 'listener_hit', 'data_dir', 'write_usr', 'fork')} == dict(
        read=False, connect=False, listener_hit=False, data_dir=False, write_usr=False, fork=False)


# ---------------------------------------------------------------- time, processes, memory, disk
@needs_bwrap
@pytest.mark.parametrize('src', ['def f(completions, **kw):\n  while True: pass',
                                 'import time\ndef f(completions, **kw):\n  time.sleep(60)'], ids=['loop', 'sleep'])
def test_loops_and_sleeps_time_out(guard, tmp_path, src):
    t0 = time.monotonic()
    r = guard.seen(run1(tmp_path, src))
    assert r.reason == 'REWARD_TIMEOUT' and 'within 1.5 s' in r.message and r.values == {}
    assert time.monotonic() - t0 < 10


@needs_bwrap
def test_slow_import_times_out(guard, tmp_path):
    r = guard.seen(run1(tmp_path, 'import time\ntime.sleep(60)\ndef f(completions, **kw): return [1.0]'))
    assert r.reason == 'REWARD_TIMEOUT' and 'importing reward.py' in r.message


@needs_bwrap
def test_fork_bomb_is_refused(guard, tmp_path):
    r = guard.seen(run1(tmp_path, 'import os\ndef f(completions, **kw):\n  while True: os.fork()'))
    assert r.reason == 'REWARD_RAISED' and 'Operation not permitted' in r.message
    # a bomb that swallows the error reports how many children it got: none, by any route
    src = '''
import os, subprocess, multiprocessing
def f(completions, **kw):
    n = 0
    for spawn in (os.fork, lambda: subprocess.Popen(['true']), lambda: multiprocessing.Process(target=print).start()):
        try: spawn(); n += 1
        except OSError: pass
    return [float(n) for _ in completions]
'''
    r = guard.seen(run1(tmp_path, src))
    assert (r.reason, set(r.values.values())) == (None, {0.0})


@needs_bwrap
def test_threads_still_work(tmp_path):
    src = 'import threading\ndef f(completions, **kw):\n  t = threading.Thread(target=print); t.start(); t.join(); return [0.5 for _ in completions]'
    assert run1(tmp_path, src).values == {'a': 0.5, 'b': 0.5, 'c': 0.5}


@needs_bwrap
def test_allocating_3gb_hits_the_memory_limit(guard, tmp_path):
    r = guard.seen(run1(tmp_path, 'def f(completions, **kw):\n  x = bytearray(3 << 30)\n  return [1.0 for _ in completions]'))
    assert r.reason == 'REWARD_MEMORY' and 'MiB' in r.message


@needs_bwrap
@pytest.mark.parametrize('where', ['/dev/shm', '/tmp'])
def test_filling_shm_and_tmp_stops_at_the_cap(guard, tmp_path, where):
    src = f'''
def f(completions, **kw):
    with open("{where}/fill", "wb") as fh:
        while True: fh.write(b"x" * (1 << 20))
'''
    r = guard.seen(run1(tmp_path, src))
    assert r.reason == 'REWARD_RAISED' and ('No space left' in r.message or 'File too large' in r.message), r.message


@needs_bwrap
def test_workspace_and_harness_are_read_only(guard, tmp_path):
    src = '''
def f(completions, **kw):
    out = []
    for p in ("/harness/af_harness.py", "/workspace/reward.py", "/workspace/new.py", "/usr/evil", "/evil", "/dev/evil"):
        try: open(p, "a").write("x"); out.append(1.0)
        except OSError: out.append(0.0)
    return [max(out) for _ in completions]
'''
    r = guard.seen(run1(tmp_path, src))
    assert (r.reason, set(r.values.values())) == (None, {0.0})
    src2 = 'import os\ndef f(completions, **kw):\n  os.chmod("/harness/af_harness.py", 0o777); return [1.0]'
    r = guard.seen(run1(tmp_path, src2))
    assert r.reason == 'REWARD_RAISED' and 'Read-only' in r.message


# ---------------------------------------------------------------- network, secrets, other processes
@needs_bwrap
def test_loopback_listener_unreachable(guard, tmp_path):
    lst = socket.socket(); lst.bind(('127.0.0.1', 0)); lst.listen(4)
    port = lst.getsockname()[1]
    src = f'import socket\ndef f(completions, **kw):\n  socket.create_connection(("127.0.0.1", {port}), timeout=1)\n  return [1.0 for _ in completions]'
    try:
        r = guard.seen(run1(tmp_path, src))
        lst.setblocking(False)
        with pytest.raises(BlockingIOError): lst.accept()
    finally: lst.close()
    assert r.reason == 'REWARD_RAISED' and ('refused' in r.message or 'unreachable' in r.message), r.message


@needs_bwrap
def test_environ_and_planted_secret_unreadable(guard, tmp_path, monkeypatch, platform):
    token = 'AFSECRET-' + os.urandom(8).hex()
    monkeypatch.setenv('AGENTFORGE_TEST_SECRET', token)
    src = f'''
import os, sys
def f(completions, **kw):
    seen = []
    for p in os.listdir("/proc"):
        for name in ("environ", "cmdline"):
            try: seen.append(open(f"/proc/{{p}}/{{name}}", "rb").read())
            except OSError: pass
    n_proc = len(seen)
    for path in ({str(platform['path'])!r}, {str(platform['root'] / 'secret.key')!r}, {str(platform['root'])!r}):
        try: seen.append(open(path, "rb").read()); print("GOT-FILE", path)
        except OSError as e: print("refused", path, type(e).__name__)
    for top in ("/tmp", "/workspace", "/dev/shm", "/harness"):
        for d, dirs, files in os.walk(top):
            dirs[:] = [x for x in dirs if not os.path.join(d, x).startswith((sys.prefix, sys.base_prefix))]  # a venv under /tmp
            for fn in files:
                try: seen.append(open(os.path.join(d, fn), "rb").read(1 << 16))
                except OSError: pass
    blob = b"\\n".join(seen)
    print(b"\\n".join(seen[:n_proc]).decode("utf-8", "replace")[:20000])   # what /proc showed
    needles = (b"AFCAN" + b"ARY-", b"AFSEC" + b"RET-")   # split: reward.py itself is in /workspace
    return [float(any(n in blob for n in needles)) for _ in completions]
'''
    r = guard.seen(run1(tmp_path, src))
    assert (r.reason, set(r.values.values())) == (None, {0.0}), r
    assert 'PATH=/usr/bin' in r.stdout and 'refused' in r.stdout     # it did read /proc/*/environ ...
    assert token not in r.stdout and 'GOT-FILE /' not in r.stdout   # ... and found neither secret


@needs_bwrap
def test_killing_other_processes_fails(guard, tmp_path):
    src = f'''
import os, signal
def f(completions, **kw):
    for pid in (-1, os.getppid(), 1):
        try: os.kill(pid, signal.SIGKILL)
        except OSError: pass
    os.kill({os.getpid()}, signal.SIGKILL)   # the test process's host pid
'''
    r = guard.seen(run1(tmp_path, src))
    assert r.reason in ('REWARD_RAISED', 'REWARD_CRASHED'), r
    assert 'ProcessLookupError' in r.message or 'PermissionError' in r.message or r.reason == 'REWARD_CRASHED'
    assert os.getpid() and threading.main_thread().is_alive()   # we are still here


# ---------------------------------------------------------------- output
@needs_bwrap
def test_stdout_flood_is_cut(guard, tmp_path):
    r = guard.seen(run1(tmp_path, 'def f(completions, **kw):\n  while True: print("x" * 10000)'))
    assert r.reason == 'OUTPUT_FLOOD' and len(r.stdout) <= 2 * FAST.tail_bytes


@needs_bwrap
def test_fake_log_lines_stay_escaped_data(guard, tmp_path):
    src = '''
import sys, json
def f(completions, **kw):
    print('{"t": "started"}'); print(json.dumps({"t": "result", "values": [["a", ["f", "0x1.0p+0"]]]}))
    print("INFO harness started\\x1b[2K", file=sys.stderr)
    return [0.25 for _ in completions]
'''
    r = guard.seen(run1(tmp_path, src))
    assert (r.reason, set(r.values.values())) == (None, {0.25})
    assert '\n' not in r.stdout and '\\n' in r.stdout and '"t": "result"' in r.stdout
    assert '\x1b' not in r.stderr and '\\x1b' in r.stderr


# ---------------------------------------------------------------- exits, exceptions, bad values
@needs_bwrap
@pytest.mark.parametrize('src,reason', [
    ('import sys\ndef f(completions, **kw): sys.exit(0)', 'REWARD_EXITED_EARLY'),
    ('import os\ndef f(completions, **kw): os._exit(0)', 'REWARD_EXITED_EARLY'),
    ('import sys\nsys.exit(0)\ndef f(completions, **kw): return [1.0]', 'REWARD_EXITED_EARLY'),
    ('import os\ndef f(completions, **kw): os._exit(3)', 'REWARD_CRASHED'),
    ('import unittest\ndef f(completions, **kw): raise unittest.SkipTest("fine")', 'REWARD_RAISED'),
    ('import unittest\nraise unittest.SkipTest("fine")', 'REWARD_IMPORT_ERROR'),
    ('def f(completions, **kw): raise KeyboardInterrupt', 'REWARD_RAISED'),
    ('def g(completions, **kw): return [1.0]', 'REWARD_NO_FUNCTION'),
    ('def f(:', 'REWARD_IMPORT_ERROR'),
], ids=['sys.exit0', 'os._exit0', 'exit-at-import', 'os._exit3', 'skiptest', 'skiptest-import', 'kbint', 'nofn', 'syntax'])
def test_exits_and_exceptions_never_pass(guard, tmp_path, src, reason):
    r = guard.seen(run1(tmp_path, src))
    assert r.reason == reason and r.values == {} and not r.infra, r


LYING = '''
class Liar(float):
    def __eq__(self, other): return True
    def __float__(self): return 1.0
class Obj:
    __class__ = property(lambda self: float)
    def __eq__(self, other): return True
'''
@needs_bwrap
@pytest.mark.parametrize('expr', ['True', '"1"', 'float("nan")', 'float("inf")', '-0.1', '1.5', '2', 'Liar(2.0)', 'Liar(0.5)',
                                  'Obj()', '[1.0]', '{"v": 1}', 'b"1"', '10**400'])
def test_bad_values_are_rejected(guard, tmp_path, expr):
    r = guard.seen(run1(tmp_path, LYING + f'def f(completions, **kw): return [{expr} for _ in completions]'))
    assert r.reason == 'REWARD_BAD_VALUE' and r.values == {}, (expr, r)
    assert "'a':" in r.message


@needs_bwrap
@pytest.mark.parametrize('src,reason', [
    ('def f(completions, **kw): return [1.0]', 'REWARD_MISSING_VALUE'),
    ('def f(completions, **kw): return [1.0] * 5', 'REWARD_BAD_VALUE'),
    ('def f(completions, **kw): return 1.0', 'REWARD_BAD_VALUE'),
    ('def f(completions, **kw): return (x for x in [1.0, 1.0, 1.0])', 'REWARD_BAD_VALUE'),
])
def test_wrong_shapes(guard, tmp_path, src, reason):
    r = guard.seen(run1(tmp_path, src))
    assert r.reason == reason, r


# ---------------------------------------------------------------- monkey-patching the harness
PATCHES = {
    # detectable: the parent re-checks whatever crosses the pipe
    'dumps-garbage': ('import __main__\n__main__._dumps = lambda o: "not json"\ndef f(completions, **kw): return [1.0 for _ in completions]',
                      'REWARD_PROTOCOL'),
    'json-dumps-ignored': ('import json\njson.dumps = lambda o: "not json"\ndef f(completions, **kw): return [0.5 for _ in completions]',
                           None),   # the harness bound json.dumps before any agent code ran
    'fake-other-call': ('import os, sys, json\ndef f(completions, **kw):\n  os.write(int(sys.argv[1]), b\'{"t": "result", "call": "x", "n": 3, '
                        '"values": [["a", null], ["b", null], ["c", null]]}\\n\')\n  return [1.0 for _ in completions]', 'REWARD_PROTOCOL'),
    'nan-behind-enc': ('import __main__\n__main__.enc = lambda v: ["f", "nan"]\ndef f(completions, **kw): return [1.0 for _ in completions]',
                       'REWARD_BAD_VALUE'),
    'unknown-ids': ('import __main__\nreal = __main__.send\n__main__.send = lambda m: real({**m, "values": [["zz", None]] + m["values"]} if m["t"] == "result" else m)\n'
                    'def f(completions, **kw): return [1.0 for _ in completions]', 'REWARD_PROTOCOL'),
    'drop-values': ('import __main__\nreal = __main__.send\n__main__.send = lambda m: real({**m, "values": []} if m["t"] == "result" else m)\n'
                    'def f(completions, **kw): return [1.0 for _ in completions]', 'REWARD_MISSING_VALUE'),
    'deep-json': ('import os, sys\ndef f(completions, **kw):\n  os.write(int(sys.argv[1]), b"[" * 200000 + b"\\n")\n  return [1.0 for _ in completions]',
                  'REWARD_PROTOCOL'),
    'line-flood': ('import os, sys\ndef f(completions, **kw):\n  os.write(int(sys.argv[1]), b"\\n" * 1000000)\n  return [1.0 for _ in completions]',
                   'REWARD_PROTOCOL'),
    'oversized': ('import os, sys\ndef f(completions, **kw):\n  os.write(int(sys.argv[1]), b"x" * (17 << 20))\n  return [1.0 for _ in completions]',
                  'REWARD_PROTOCOL'),
    'close-result-fd': ('import os, sys\ndef f(completions, **kw):\n  os.close(int(sys.argv[1])); import time; time.sleep(30)', 'REWARD_TIMEOUT'),
}
@needs_bwrap
@pytest.mark.parametrize('name', list(PATCHES))
def test_patched_harness_is_still_caught(guard, tmp_path, name):
    src, reason = PATCHES[name]
    r = guard.seen(run1(tmp_path, src))
    assert r.reason == reason, r


@needs_bwrap
def test_patched_harness_what_the_parent_cannot_see(guard, tmp_path):
    "A patch that turns every value into a well-formed 1.0 is indistinguishable from returning 1.0: the probe's gates catch it."
    src = 'import __main__\n__main__.enc = lambda v: ["f", (1.0).hex()]\ndef f(completions, **kw): return ["junk" for _ in completions]'
    r = guard.seen(run1(tmp_path, src))
    assert (r.reason, set(r.values.values())) == (None, {1.0})


# ---------------------------------------------------------------- the spec folder itself
@needs_bwrap
@pytest.mark.parametrize('kind', ['symlink-hidden', 'symlink-root', 'hardlink', 'fifo', 'too-big'])
def test_unreadable_spec_folders(guard, tmp_path, platform, kind):
    d = write_spec(tmp_path, HONEST)
    if kind == 'symlink-hidden': os.symlink(platform['path'], d / 'notes.md')
    elif kind == 'symlink-root': os.symlink('/', d / 'data')
    elif kind == 'hardlink': os.link(d / 'reward.py', tmp_path / 'other-name')
    elif kind == 'fifo': os.mkfifo(d / 'notes.md')
    else: (d / 'notes.md').write_bytes(b'x' * 2000)
    r = guard.seen(run_rewards(d, 'exact', BATCH, limits=Limits(workspace_bytes=1000))['exact'])
    assert r.reason == 'SPEC_UNREADABLE' and r.values == {}, r


# ---------------------------------------------------------------- infrastructure failures and fail-closed
@needs_bwrap
def test_sandbox_that_never_starts_is_infra(tmp_path, monkeypatch):
    real = sb._bwrap_argv
    monkeypatch.setattr(sb, '_bwrap_argv', lambda *a: (lambda argv, fds: (argv[:1] + ['--no-such-option'] + argv[1:], fds))(*real(*a)))
    r = run1(tmp_path, HONEST, fn='exact')
    assert r.reason == 'INFRA_NO_MARKER' and r.infra and 'no-such-option' in r.stderr, r
    assert _ours() == [] and not any(e.startswith('af-') for e in os.listdir('/tmp') if e not in _AF_TMP_AT_IMPORT)


@needs_bwrap
def test_canary_fails_closed_when_a_host_path_leaks(monkeypatch):
    real = sb.sandbox_binds
    monkeypatch.setattr(sb, 'sandbox_binds', lambda: (real()[0] + [('/tmp', '/tmp')], real()[1]))
    with pytest.raises(SandboxUnsafe, match='AGENTFORGE_DATA_DIR'): ensure_safe(force=True)   # the bind check first
    monkeypatch.undo()
    leak = tempfile.mkdtemp(prefix='af-leak-', dir='/var/tmp')      # a host dir that a buggy bind list exposes
    try:
        mkdtemp = tempfile.mkdtemp
        monkeypatch.setattr(sb, 'sandbox_binds', lambda: (real()[0] + [(leak, leak)], real()[1]))
        monkeypatch.setattr(tempfile, 'mkdtemp', lambda prefix='': mkdtemp(prefix=prefix, dir=leak))
        with pytest.raises(SandboxUnsafe, match='host-only file'): ensure_safe(force=True)
        monkeypatch.undo()
    finally: shutil.rmtree(leak)
    ensure_safe(force=True)


@needs_bwrap
def test_refuses_when_data_dir_is_visible(tmp_path, monkeypatch):
    monkeypatch.setenv('AGENTFORGE_DATA_DIR', os.path.join(sys.prefix, 'af-data'))
    with pytest.raises(SandboxUnsafe, match='AGENTFORGE_DATA_DIR'):
        run1(tmp_path, HONEST, fn='exact')
    assert _ours() == [] and not os.path.exists(os.path.join(sys.prefix, 'af-data'))


def test_weak_mode_refused_in_ci(monkeypatch):
    monkeypatch.setenv('CI', 'true')
    with pytest.raises(SandboxUnsafe, match='CI=true'): sb.sandbox_mode('weak')
    if not HAVE_BWRAP:
        with pytest.raises(SandboxUnsafe): sb.sandbox_mode('auto')


def test_weak_mode_is_loud_and_labelled(tmp_path, monkeypatch, capfd):
    monkeypatch.delenv('CI', raising=False); monkeypatch.delenv(sb.WEAK_SAID, raising=False)
    with pytest.warns(RuntimeWarning, match='WEAK'):
        r = run_rewards(write_spec(tmp_path, HONEST), 'exact', BATCH, mode='weak')['exact']
    assert (r.mode, r.reason, r.values) == ('weak', None, HONEST_VALUES)
    assert not any(e.startswith('af-weak-') for e in _af_tmp())
    assert capfd.readouterr().err.count('WEAK mode') == 1


def test_weak_mode_warning_once_per_run(tmp_path, monkeypatch, capfd):
    "The banner is printed once per run: not again in this process, nor in any process the run starts."
    monkeypatch.delenv('CI', raising=False); monkeypatch.delenv(sb.WEAK_SAID, raising=False)
    with pytest.warns(RuntimeWarning, match='WEAK'): sb.sandbox_mode('weak')
    for _ in range(3): run_rewards(write_spec(tmp_path, HONEST), 'exact', BATCH, mode='weak')
    child = subprocess.run([sys.executable, '-c', 'from agentforge.sandbox import sandbox_mode; sandbox_mode("weak")'],
                           capture_output=True, text=True)   # inherits the flag, as pool jobs do
    assert child.returncode == 0 and 'WEAK' not in child.stderr
    assert capfd.readouterr().err.count('WEAK mode') == 1


# ---------------------------------------------------------------- the long-lived worker
@needs_bwrap
def test_worker_keeps_state_restarts_after_timeout_and_closes(guard, tmp_path):
    src = '''
import time
calls = []
def count(completions, **kw):
    calls.append(1); return [min(1.0, len(calls) / 10) for _ in completions]
def slow(completions, **kw):
    time.sleep(30)
'''
    with RewardWorker(write_spec(tmp_path, src), limits=FAST) as w:
        a, b = w.call('count', BATCH), w.call('count', BATCH)
        assert (a.values['a'], b.values['a'], w.starts) == (0.1, 0.2, 1)
        assert a.start_seconds > 0 and b.start_seconds == 0
        t = w.call('slow', BATCH, timeout=0.5)
        assert t.reason == 'REWARD_TIMEOUT' and w.proc is None
        c = w.call('count', BATCH)                       # a fresh sandbox: the counter starts again
        assert (c.values['a'], w.starts) == (0.1, 2)
        guard.seen(a, b, t, c)
    assert w.proc is None


@needs_bwrap
def test_bad_batches_are_the_callers_bug(tmp_path):
    with RewardWorker(write_spec(tmp_path, HONEST)) as w:
        for bad in ({'prompts': ['x']}, {**BATCH, 'answer': ['5']}, {**BATCH, 'ids': ['a', 'a', 'b']}):
            with pytest.raises(ValueError): w.call('exact', bad)
        assert w.starts == 0


# ---------------------------------------------------------------- load: launches leave nothing behind
def _fds(): return len(os.listdir('/proc/self/fd'))
def _rss_kb(): return int([l for l in open('/proc/self/status') if l.startswith('VmRSS')][0].split()[1])


def _launch_many(tmp_path, n):
    d = write_spec(tmp_path, HONEST)
    for _ in range(5): run_rewards(d, 'exact', BATCH)        # warm up allocator and caches
    fds, rss, tmp = _fds(), _rss_kb(), _af_tmp()
    for _ in range(n):
        r = run_rewards(d, 'exact', BATCH)['exact']
        assert r.values == HONEST_VALUES, r
    assert _fds() == fds and _af_tmp() == tmp and _ours() == []
    assert _rss_kb() - rss < 20_000, (rss, _rss_kb())          # flat: < 20 MB growth


@needs_bwrap
def test_200_launches_leave_nothing_behind(tmp_path):
    _launch_many(tmp_path, 200)


@needs_bwrap
@pytest.mark.slow
@pytest.mark.skipif(os.environ.get('AGENTFORGE_SLOW') != '1' and os.environ.get('CI') != 'true',
                    reason='1,000 launches (about a minute): runs in CI, or locally with AGENTFORGE_SLOW=1')
def test_1000_launches_leave_nothing_behind(tmp_path):
    _launch_many(tmp_path, 1000)
