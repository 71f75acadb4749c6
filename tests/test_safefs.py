"""Reading what the agent wrote (`agentforge.safefs`, lesson 01b): no link followed, plain single-link files only.

Real links, hard links and FIFOs on a real filesystem. The same rules are attacked through their callers in
`tests/test_spec.py` (the spec loader) and `tests/test_workspace.py` (the agent's tools).
"""
import os, threading
import pytest
from agentforge.safefs import Refused, Unsafe, has_bad_chars, not_plain, open_dirs, read_file, read_tree, walk

@pytest.fixture
def tree(tmp_path):
    "A spec-shaped folder with a secret beside it, and every trick in it."
    (tmp_path / 'secret').write_text('hidden')
    spec = tmp_path / 'spec'; (spec / 'data').mkdir(parents=True)
    (spec / 'task.yaml').write_text('brief: arithmetic\n'); (spec / 'data' / 'ok.jsonl').write_text('{}\n')
    os.symlink(tmp_path / 'secret', spec / 'link.py'); os.symlink(tmp_path, spec / 'up')
    os.link(tmp_path / 'secret', spec / 'hard.md'); os.mkfifo(spec / 'data' / 'fifo.jsonl')
    return spec

def test_plain_files_are_read_within_their_limit(tree):
    assert read_file(tree, 'task.yaml', 100) == b'brief: arithmetic\n' and read_file(tree, 'data/ok.jsonl', 3) == b'{}\n'
    with pytest.raises(Unsafe) as e: read_file(tree, 'task.yaml', 5)
    assert e.value.code == 'QUOTA_EXCEEDED'

def test_no_link_is_followed_anywhere_on_the_path(tree):
    with pytest.raises(OSError): read_file(tree, 'link.py', 100)               # the last component (ELOOP)
    with pytest.raises(Refused) as e: read_file(tree, 'up/secret', 100)         # a folder on the way
    assert (e.value.rel, e.value.missing) == ('up', False)
    with pytest.raises(Refused) as e: read_file(tree, 'nope/x', 100)
    assert (e.value.rel, e.value.missing) == ('nope', True)

def test_hard_links_and_fifos_are_refused_without_blocking(tree):
    with pytest.raises(Unsafe) as e: read_file(tree, 'hard.md', 100)
    assert e.value.code == 'HARDLINK' and '2 hard links' in e.value.why
    done = []
    t = threading.Thread(target=lambda: done.append(pytest.raises(Unsafe, read_file, tree, 'data/fifo.jsonl', 100)), daemon=True)
    t.start(); t.join(10)
    assert done and done[0].value.code == 'SPECIAL_FILE'                         # returned at once: O_NONBLOCK

def test_walk_reports_links_as_links_and_says_when_it_stopped(tree):
    entries, truncated = walk(tree, cap=100)
    kinds = {rel: kind for rel, kind, *_ in entries}
    assert kinds == {'data': 'dir', 'data/fifo.jsonl': 'special', 'data/ok.jsonl': 'file', 'hard.md': 'file',
                     'link.py': 'symlink', 'task.yaml': 'file', 'up': 'symlink'} and not truncated
    assert walk(tree, cap=3)[1] is True and len(walk(tree, cap=3)[0]) == 3

def test_read_tree_reads_honest_folders_and_refuses_the_rest(tree, tmp_path):
    with pytest.raises(ValueError, match='not a regular file'): read_tree(tree)
    honest = tmp_path / 'honest'; (honest / 'data').mkdir(parents=True)
    (honest / 'task.yaml').write_text('x'); (honest / 'data' / 'a.jsonl').write_text('yy')
    assert read_tree(honest) == {'data/a.jsonl': b'yy', 'task.yaml': b'x'}
    with pytest.raises(ValueError, match='more than 1 files'): read_tree(honest, max_files=1)
    with pytest.raises(Unsafe, match='over'): read_tree(honest, max_bytes=2)

def test_open_dirs_creates_folders_but_never_through_a_link(tree):
    fd = open_dirs(tree, ['new', 'deeper'], create=True); os.close(fd)
    assert (tree / 'new' / 'deeper').is_dir()
    with pytest.raises(Refused): open_dirs(tree, ['up', 'made-outside'], create=True)
    assert not (tree.parent / 'made-outside').exists()

def test_names_and_file_kinds(tree):
    assert [has_bad_chars(n) for n in ('task.yaml', 'a\u202eb', 'a\x00b', 'a\u200db', 'données')] == [False, True, True, True, False]
    assert not_plain(os.lstat(tree / 'task.yaml')) is None
    assert not_plain(os.lstat(tree / 'data' / 'fifo.jsonl'))[0] == 'SPECIAL_FILE'
