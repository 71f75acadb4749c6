"""Durable files (`agentforge.durable`, lesson 01a): one atomic write, folders published whole, verified manifests.

Real files, real child processes killed with SIGKILL; nothing is mocked. The pool's own checkpoint tests (a job
killed mid-checkpoint, a corrupt newest checkpoint, a changed config) stay in `tests/test_pool.py`.
"""
import json, multiprocessing, os, signal, subprocess, sys
import pytest
from agentforge.durable import (CheckpointCorrupt, build_once, publish_dir, save_checkpoint, verify_checkpoint,
                                write_atomic, write_manifest)

def test_write_atomic_replaces_whole_and_a_failed_write_keeps_the_old_file(tmp_path):
    p = write_atomic(tmp_path / 'a' / 'b.json', '{"v": 1}')
    write_atomic(p, b'{"v": 2}', mode=0o600)
    assert p.read_text() == '{"v": 2}' and p.stat().st_mode & 0o777 == 0o600
    with pytest.raises(TypeError): write_atomic(p, 123)
    assert p.read_text() == '{"v": 2}' and [x.name for x in p.parent.iterdir()] == ['b.json']

def test_publish_dir_replaces_keeps_and_cleans_up(tmp_path):
    dest = tmp_path / 'model'
    with publish_dir(dest) as tmp: (tmp / 'sub').mkdir(); (tmp / 'sub' / 'w.bin').write_bytes(b'1')
    with publish_dir(dest) as tmp: (tmp / 'w.bin').write_bytes(b'2')
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob('*')) == ['w.bin']   # replaced, not merged
    with pytest.raises(ZeroDivisionError):
        with publish_dir(dest) as tmp: (tmp / 'w.bin').write_bytes(b'half'); 1 / 0
    with publish_dir(dest, replace=False) as tmp: (tmp / 'w.bin').write_bytes(b'3')
    assert (dest / 'w.bin').read_bytes() == b'2' and [p.name for p in tmp_path.iterdir()] == ['model']

def _publish_same(dest, data, barrier):
    barrier.wait()
    with publish_dir(dest, replace=False) as tmp: (tmp / 'spec.yaml').write_bytes(data)

def test_content_addressed_publish_from_many_processes_gives_one_whole_folder(tmp_path):
    "Eight processes publish the same content-addressed folder at once: every one succeeds, one copy remains."
    dest, ctx = tmp_path / 'specs' / 'abc123', multiprocessing.get_context('fork')
    barrier = ctx.Barrier(8)
    procs = [ctx.Process(target=_publish_same, args=(dest, b'x' * 4096, barrier)) for _ in range(8)]
    for p in procs: p.start()
    for p in procs: p.join(30)
    assert [p.exitcode for p in procs] == [0] * 8
    assert [p.name for p in dest.parent.iterdir()] == ['abc123'] and (dest / 'spec.yaml').read_bytes() == b'x' * 4096

def _build_racer(dest, barrier):
    "One of several processes that all find `dest` missing at once; its build is slow and leaves a mark."
    def build():
        with open(dest.parent / 'builds.log', 'a') as log: log.write(f'{os.getpid()}\n')
        with publish_dir(dest) as tmp: (tmp / 'data').write_text('ok')
        return dest
    barrier.wait()
    got = build_once(dest.parent / 'thing.lock', lambda: (dest / 'data').exists() and dest, build)
    assert got == dest and (dest / 'data').read_text() == 'ok'

def test_build_once_builds_once_for_many_processes_and_again_after_a_failed_build(tmp_path):
    "Six processes miss the same folder at once: one builds it, the rest wait on the lock and find it (lesson 01a)."
    "A build that raises leaves the lock free and nothing built: the next caller builds."
    dest, ctx = tmp_path / 'thing', multiprocessing.get_context('fork')
    barrier = ctx.Barrier(6)
    procs = [ctx.Process(target=_build_racer, args=(dest, barrier)) for _ in range(6)]
    for p in procs: p.start()
    for p in procs: p.join(60)
    assert [p.exitcode for p in procs] == [0] * 6
    assert len((tmp_path / 'builds.log').read_text().split()) == 1
    other = tmp_path / 'other'
    def broken(): raise OSError('disk full')
    with pytest.raises(OSError, match='disk full'): build_once(tmp_path / 'other.lock', lambda: None, broken)
    assert not other.exists()
    assert build_once(tmp_path / 'other.lock', lambda: None, lambda: 'built') == 'built'

KILLED = """
import sys, time
from agentforge.durable import publish_dir
with publish_dir(sys.argv[1]) as tmp:
    (tmp / 'w.bin').write_bytes(b'new-but-unfinished')
    print('writing', flush=True); time.sleep(60)
"""

def test_a_kill_inside_publish_dir_leaves_the_old_folder(tmp_path):
    dest = tmp_path / 'model'
    with publish_dir(dest) as tmp: (tmp / 'w.bin').write_bytes(b'old')
    p = subprocess.Popen([sys.executable, '-c', KILLED, str(dest)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == 'writing'
    os.kill(p.pid, signal.SIGKILL); p.wait(10)
    assert (dest / 'w.bin').read_bytes() == b'old'            # readers never saw the half-built folder

def test_manifests_verify_nested_files_and_refuse_malformed_ones(tmp_path):
    d = tmp_path / 'ck'; (d / 'a').mkdir(parents=True); (d / 'a' / 'x.bin').write_bytes(b'12345')
    man = write_manifest(d, step=1, note='n')
    assert man['files'] == {'a/x.bin': {'sha256': man['files']['a/x.bin']['sha256'], 'bytes': 5}} and man['note'] == 'n'
    assert verify_checkpoint(d)['step'] == 1
    (d / 'manifest.json').write_text(json.dumps({'files': {'a/x.bin': 'an-old-style-bare-hash'}}))
    with pytest.raises(CheckpointCorrupt, match='unreadable manifest'): verify_checkpoint(d)   # not a TypeError
    ck = save_checkpoint(tmp_path / 'cks', 2, {'s.json': b'{}'})
    (ck / 's.json').write_bytes(b'{ }')
    with pytest.raises(CheckpointCorrupt, match='s.json: sha256 mismatch'): verify_checkpoint(ck)

def test_a_student_folder_with_an_old_manifest_is_not_trusted(tmp_path):
    "A student cached under the old manifest format (bare hashes) is rebuilt, never loaded unverified."
    from agentforge.durable import verified as _verified
    d = tmp_path / 'students' / 'k'; d.mkdir(parents=True); (d / 'model.safetensors').write_bytes(b'w')
    (d / 'manifest.json').write_text(json.dumps({'key': 'k', 'files': {'model.safetensors': 'deadbeef'}}))
    assert _verified(d) is None
    write_manifest(d, key='k')
    assert _verified(d)['key'] == 'k'


def test_processes_creating_one_database_at_once_all_get_wal(tmp_path):
    """Switching a new SQLite file to WAL answers 'database is locked' at once, without waiting, while another process
    switches it too (a fresh make test lost a 09b_library writer to it): `open_sqlite` retries that step."""
    import subprocess, sys, time
    opener = ('import sys, time\nfrom agentforge.durable import open_sqlite\n'
              'while time.time() < float(sys.argv[2]): pass\n'
              'print(open_sqlite(sys.argv[1]).execute("PRAGMA journal_mode").fetchone()[0])\n')
    for trial in range(6):
        at = time.time() + 1.5
        procs = [subprocess.Popen([sys.executable, '-c', opener, str(tmp_path / f'{trial}.db'), str(at)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(6)]
        out = [(p.wait(), p.stdout.read().strip(), p.stderr.read()[-300:]) for p in procs]
        assert all(rc == 0 and mode == 'wal' for rc, mode, _ in out), (trial, out)
