"Fixtures shared by several test modules (pytest finds this file itself)."
import pytest, torch
from agentforge.tasks import cache_dir

@pytest.fixture(scope='module')
def one_thread():
    """One torch thread for a module's tests: tiny models run far faster on a shared 2-core machine without OpenMP
    oversubscription, and floats are bit-identical across processes (a child started by a test uses one thread too).
    A module opts in with `pytestmark = pytest.mark.usefixtures('one_thread')`."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(autouse=True)
def no_kept_warm_process():
    """After every test, stop the warm processes `runner.work(keep_warm=True)` kept (an outer run's episodes keep one
    across steps; `run.two_loop` stops it at its end, but a test that calls `run_episodes` directly is its own run).
    Without this, a later module's check that the test process has no children would see them."""
    yield
    from agentforge.runner import close_kept
    close_kept()


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    "A private result cache and data dir (so jobs really run), sharing only the built tiny student."
    cache = tmp_path / 'cache'; cache.mkdir()
    (cache_dir() / 'students').mkdir(parents=True, exist_ok=True)
    (cache / 'students').symlink_to(cache_dir() / 'students', target_is_directory=True)
    monkeypatch.setenv('AGENTFORGE_CACHE_DIR', str(cache))
    monkeypatch.setenv('AGENTFORGE_DATA_DIR', str(tmp_path / 'platform'))
    return cache
